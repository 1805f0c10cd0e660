"""The chat client against a scripted OpenAI-compatible server: streaming, deadlines and broken streams."""

from __future__ import annotations

import asyncio
import time

import pytest

from rag.models.chat import ChatModel, Endpoint, ModelError
from tests.fakes.openai_server import FakeOpenAIServer

MESSAGES = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hello?"}]


@pytest.fixture
def server():
    with FakeOpenAIServer() as fake:
        yield fake


def model(server, name="Qwen/Qwen3-4B", **endpoint) -> ChatModel:
    return ChatModel(Endpoint(server.base_url, name, max_retries=0, **endpoint))


async def collect(chat: ChatModel) -> list[str]:
    return [delta async for delta in chat.stream(MESSAGES)]


def test_stream_yields_deltas_and_disables_qwen3_thinking(server):
    server.script.chat_reply, server.script.chat_pieces = "<think>\n\n</think>\n\nMeals are 45 EUR [1].", 6
    deltas = asyncio.run(collect(model(server)))
    assert "".join(deltas) == "Meals are 45 EUR [1]." and len(deltas) > 1
    body = server.requests_to("/chat/completions")[0]["body"]
    assert body["stream"] is True and body["chat_template_kwargs"] == {"enable_thinking": False}
    assert body["messages"][-1]["content"].endswith("/no_think")


def test_other_models_get_no_soft_switch(server):
    asyncio.run(collect(model(server, name="SmolLM2-135M-Instruct")))
    assert not server.requests_to("/chat/completions")[0]["body"]["messages"][-1]["content"].endswith("/no_think")


def test_timeout_before_the_first_token(server):
    server.script.delay = 3.0
    began = time.perf_counter()
    with pytest.raises(ModelError) as caught:
        asyncio.run(collect(model(server, first_token_timeout=0.5, timeout=5)))
    assert caught.value.kind == "timeout" and "Qwen/Qwen3-4B" in str(caught.value)
    assert time.perf_counter() - began < 2.5


def test_stream_cut_mid_way(server):
    server.script.chat_reply, server.script.chat_pieces, server.script.cut_after = "one two three four", 4, 2
    chat = model(server)

    async def run():
        got = []
        with pytest.raises(ModelError) as caught:
            async for delta in chat.stream(MESSAGES):
                got.append(delta)
        return got, caught.value

    got, error = asyncio.run(run())
    text = "".join(got)
    assert text and "one two three four".startswith(text) and text != "one two three four"
    assert error.kind == "stream_broken"


def test_malformed_sse_is_a_clear_error(server):
    server.script.chat_reply, server.script.malformed_after = "abcdefgh", 1
    with pytest.raises(ModelError) as caught:
        asyncio.run(collect(model(server)))
    assert caught.value.kind in ("stream_broken", "bad_response")


def test_http_500_is_unavailable(server):
    server.script.fail_next = [500]
    with pytest.raises(ModelError) as caught:
        asyncio.run(collect(model(server)))
    assert caught.value.kind == "unavailable" and "HTTP 500" in str(caught.value)


def test_server_down_is_unavailable():
    chat = ChatModel(Endpoint("http://127.0.0.1:9/v1", "m", max_retries=0, timeout=2))
    with pytest.raises(ModelError) as caught:
        asyncio.run(collect(chat))
    assert caught.value.kind in ("unavailable", "timeout")


def test_closing_the_stream_early_closes_the_connection(server):
    server.script.chat_reply, server.script.chat_pieces, server.script.piece_delay = "x" * 200, 100, 0.02

    async def run():
        chat = model(server)
        stream = chat.stream(MESSAGES)
        async for _ in stream:
            break
        await stream.aclose()

    asyncio.run(run())
    deadline = time.time() + 5
    while server.script.disconnects == 0 and time.time() < deadline:
        time.sleep(0.05)
    assert server.script.disconnects == 1


def test_complete_strips_thinking(server):
    server.script.chat_reply = "<think>hmm</think>\n差旅 伙食补助 标准"
    assert asyncio.run(model(server).complete(MESSAGES)) == "差旅 伙食补助 标准"


KEY = "sk-answer-role-7f3a9c"


def test_an_error_never_quotes_the_api_key_or_a_password_in_the_url(server):
    """A gateway that rejects a request may quote the header it got; the message goes to the log and, for an
    operator's command, to the terminal."""
    server.script.echo_authorization = True
    server.script.fail_next = [401]
    base = server.base_url.replace("http://", "http://proxy-user:hunter22@")
    with pytest.raises(ModelError) as caught:
        asyncio.run(collect(ChatModel(Endpoint(base, "Qwen/Qwen3-4B", api_key=KEY, max_retries=0))))
    assert "HTTP 401" in str(caught.value) and "rejected header Authorization" in str(caught.value)
    assert KEY not in str(caught.value) and "hunter22" not in str(caught.value)
