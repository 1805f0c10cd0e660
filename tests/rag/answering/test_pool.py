from __future__ import annotations

from rag.words.languages import passage_language
from tests.rag.answering.conftest import found


def test_a_chinese_question_gets_the_top_passages_and_the_best_english_ones(handbook):
    pipeline = handbook.pipeline()
    ctx = found(pipeline.finder, "办公室几点关门？")
    _, sources = pipeline.pool.run(ctx)
    top = [h.chunk for h in ctx.hits[: pipeline.config.top_k]]
    assert sources[: len(top)] == top and "pool" in ctx.timings
    joined = sources[len(top):]
    assert joined and all(passage_language(c) == "en" for c in joined)
    assert ("Opening hours and access",) in [c.heading_path for c in joined], "the office guide's hours join"


def test_an_english_section_a_chinese_question_names_is_among_the_top_passages(handbook):
    """"新员工第一天要做什么？" names "Your first day" in translation (rag.index.retrieval's named sections): it ranks
    among the top passages itself (it joined them from below before)."""
    pipeline = handbook.pipeline()
    ctx = found(pipeline.finder, "新员工第一天要做什么？")
    top = [h.chunk for h in ctx.hits[: pipeline.config.top_k]]
    assert ("Your first day",) in [c.heading_path for c in top]
