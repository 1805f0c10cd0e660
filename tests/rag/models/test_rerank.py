import asyncio
import json

import pytest

from rag.models.chat import Endpoint, ModelError
from rag.models.rerank import SwiftReranker, VllmReranker, qwen3_pair
from tests.fakes.openai_server import FakeOpenAIServer

PASSAGES = ["Hotels cost up to 150 EUR.", "Meals are 45 EUR a day.", "Passwords have 14 characters."]


def by_overlap(query: str, document: str) -> float:
    return len(set(query.lower().split()) & set(document.lower().rstrip(".").split())) / 10


def test_vllm_rerank_scores_come_back_in_input_order():
    with FakeOpenAIServer() as server:
        server.script.rerank = by_overlap
        reranker = VllmReranker(Endpoint(server.base_url, "Qwen/Qwen3-Reranker-0.6B"))
        scores = asyncio.run(reranker.scores("meals a day", PASSAGES))
        body = server.requests_to("/rerank")[0]["body"]
    assert scores == [0.0, pytest.approx(0.3), 0.0]
    assert body["query"] == "meals a day" and body["documents"] == PASSAGES


def test_client_side_qwen3_template_for_older_vllm():
    with FakeOpenAIServer() as server:
        reranker = VllmReranker(Endpoint(server.base_url, "Qwen/Qwen3-Reranker-0.6B"), client_template=True)
        asyncio.run(reranker.scores("meals", PASSAGES[:1]))
        body = server.requests_to("/rerank")[0]["body"]
    head, tail = qwen3_pair("meals", PASSAGES[0])
    assert body["query"] == head and body["documents"] == [tail]
    assert "<Query>: meals" in head and tail.startswith("<Document>: Hotels") and "<think>\n\n</think>" in tail


def test_swift_generative_reranker_form():
    with FakeOpenAIServer() as server:
        server.script.chat_fn = lambda body: json.dumps([by_overlap(body["messages"][1]["content"], body["messages"][2]["content"])])
        reranker = SwiftReranker(Endpoint(server.base_url, "Qwen3-Reranker-0.6B"))
        scores = asyncio.run(reranker.scores("meals a day", PASSAGES))
        bodies = [r["body"] for r in server.requests_to("/chat/completions")]
    assert scores == [0.0, pytest.approx(0.3), 0.0] and len(bodies) == 3
    assert [m["role"] for m in bodies[0]["messages"]] == ["system", "user", "assistant"]


@pytest.mark.parametrize("status", [500, 404])
def test_reranker_errors_are_model_errors(status):
    with FakeOpenAIServer() as server:
        server.script.fail_next = [status]
        with pytest.raises(ModelError) as caught:
            asyncio.run(VllmReranker(Endpoint(server.base_url, "r")).scores("q", PASSAGES))
    assert caught.value.kind == "unavailable" and str(status) in str(caught.value)


def test_a_reranker_error_never_quotes_the_api_key():
    with FakeOpenAIServer() as server:
        server.script.echo_authorization, server.script.fail_next = True, [403]
        reranker = VllmReranker(Endpoint(server.base_url, "Qwen/Qwen3-Reranker-0.6B", api_key="sk-rerank-51d2e"))
        with pytest.raises(ModelError) as caught:
            asyncio.run(reranker.scores("meals", PASSAGES))
    assert "HTTP 403" in str(caught.value) and "sk-rerank-51d2e" not in str(caught.value)
