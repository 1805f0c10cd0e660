from __future__ import annotations

from rag.languages import passage_language
from tests.rag.answering.conftest import found


def test_a_chinese_question_gets_the_top_passages_and_the_best_english_ones(handbook):
    pipeline = handbook.pipeline()
    ctx = found(pipeline.finder, "新员工第一天要做什么？")
    sources = pipeline.pool.run(ctx)
    top = [h.chunk for h in ctx.hits[: pipeline.config.top_k]]
    assert sources[: len(top)] == top and "pool" in ctx.timings
    joined = sources[len(top):]
    assert joined and all(passage_language(c) == "en" for c in joined)
    assert ("Your first day",) in [c.heading_path for c in joined], "the onboarding guide's first day joins"
