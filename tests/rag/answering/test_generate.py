from __future__ import annotations

import asyncio

from rag.answering.generate import UNAVAILABLE
from rag.judging.gate import GateDecision
from rag.judging.judge import Judgement
from tests.fakes.openai_server import FakeOpenAIServer
from tests.rag.answering.conftest import pooled

REPLY = "Passwords must be at least 14 characters long [S1]. Use the password manager [S1]."


def test_the_models_text_streams_and_its_failures_say_what_happened(handbook):
    with FakeOpenAIServer() as server:
        server.script.chat_reply, server.script.chat_pieces = REPLY, 6
        pipeline = handbook.pipeline(answer_base_url=server.base_url, answer_model="m")
        contexts = [pooled(pipeline, "How long must a password be?") for _ in range(3)]
        for ctx in contexts:
            ctx.judgement = Judgement(GateDecision(True, "evidence strong enough"))

        async def three():
            whole = [d async for d in pipeline.generate.run(contexts[0])]
            server.script.fail_next = [503, 503, 503]
            down = [d async for d in pipeline.generate.run(contexts[1])]
            server.script.cut_after = 3
            cut = [d async for d in pipeline.generate.run(contexts[2])]
            return whole, down, cut

        whole, down, cut = asyncio.run(three())
        prompt = server.requests_to("/chat/completions")[0]["body"]["messages"][-1]["content"]
    assert "".join(whole) == REPLY and len(whole) > 1 and "first_token" in contexts[0].timings
    assert 'id="S1"' in prompt and contexts[0].sources[0].text.split("\n")[0][:40] in prompt
    assert down == [UNAVAILABLE] and contexts[1].failures[0].startswith("answer:")
    assert "showing quoted passages instead" in contexts[1].notices[0]
    assert "".join(cut).endswith("(The answer was cut short because the answer model failed; what is above may be "
                                 "incomplete.)")
    assert "failed mid-answer" in contexts[2].notices[0]
