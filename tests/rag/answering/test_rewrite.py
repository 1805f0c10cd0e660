from __future__ import annotations

import asyncio

from tests.fakes.openai_server import FakeOpenAIServer
from tests.rag.answering.conftest import opened

HISTORY = [("How much can I spend on a hotel?", "Hotels are reimbursed up to 150 EUR per night [1].")]


def test_a_follow_up_is_rewritten_once_then_read_from_the_cache_and_a_failure_keeps_the_question(handbook):
    with FakeOpenAIServer() as server:
        server.script.chat_fn = lambda _body: "Query: hotel reimbursement limit per night in London"
        pipeline = handbook.pipeline(rewrite_base_url=server.base_url, rewrite_model="rewriter")
        rewrite = pipeline.rewrite

        async def run():
            ctx = opened(pipeline.finder, "and in London?", history=HISTORY)
            lookup = rewrite.lookup(ctx)
            assert not lookup.settled
            asked = await rewrite.run(ctx, lookup)
            rewrite.remember(ctx, asked)
            again = rewrite.lookup(opened(pipeline.finder, "and in London?", history=HISTORY))
            calls.append(len(server.requests_to("/chat/completions")))
            server.script.fail_next = [500, 500, 500]
            down = opened(pipeline.finder, "and in Paris?", history=HISTORY)
            return ctx, asked, again, down, await rewrite.run(down, rewrite.lookup(down))

        calls: list[int] = []
        ctx, asked, again, down, failed = asyncio.run(run())
    assert asked.settled and asked.rewritten == "hotel reimbursement limit per night in London"
    assert again.settled and again.rewritten == asked.rewritten and "rewrite" in ctx.timings
    assert calls == [1], "the cached rewrite asks the model nothing"
    assert not failed.settled and failed.rewritten is None
    assert down.notices == ["The query rewriter is unavailable; searched with the question as asked."]
