from __future__ import annotations

import asyncio

from tests.fakes.openai_server import FakeOpenAIServer
from tests.rag.answering.conftest import opened


def test_the_reranker_orders_the_hits_and_its_failure_keeps_the_fused_order_with_a_notice(handbook):
    with FakeOpenAIServer() as server:
        server.script.rerank = lambda _query, document: 0.9 if "USB" in document else 0.1
        finder = handbook.finder(rerank_base_url=server.base_url, rerank_model="reranker")
        ctx, failed = opened(finder, "Can I use a memory stick?"), opened(finder, "Can I use a memory stick?")
        hits = finder.search(ctx).hits

        async def twice():
            ranked = await finder.rerank.run(ctx, hits)
            server.script.fail_next = [500, 500, 500]
            return ranked, await finder.rerank.run(failed, hits)

        ranked, kept = asyncio.run(twice())
    assert "USB" in ranked.hits[0].chunk.text and ranked.rerank_scores[0] == 0.9
    assert ranked.order == "reranker:reranker" and sorted(h.chunk.id for h in ranked.hits) == sorted(h.chunk.id for h in hits)
    assert kept.hits == hits and kept.rerank_scores is None and kept.order == "fused"
    assert failed.notices == ["The reranker is unavailable; results are in retrieval order."]
    assert failed.failures and failed.failures[0].startswith("rerank:") and "rerank" in failed.timings
