from __future__ import annotations

from rag.types import Scope
from tests.rag.answering.conftest import opened


def test_each_query_finds_its_own_list_within_the_scope(handbook):
    finder = handbook.finder()
    ctx = opened(finder, "How long must a password be?", rewritten="minimum password length")
    question, rewrite = finder.retrieve.run(ctx)
    assert "14 characters" in question[0].chunk.text and "14 characters" in rewrite[0].chunk.text
    assert len(question) <= finder.depth and {"embed", "retrieve"} <= set(ctx.timings)
    elsewhere = opened(finder, "How long must a password be?", scope=Scope(frozenset({"another-team"})))
    assert finder.retrieve.run(elsewhere) == [[]], "no passage outside the scope is searched"


def test_an_english_question_on_chinese_passages_is_also_searched_translated(handbook):
    """The handbook holds both languages: the question's translation is embedded with it, and the Chinese
    leave rules that grant 陪产假十五天 come first (5th by the model's cross-language cosine alone)."""
    finder = handbook.finder()
    ctx = opened(finder, "How many days of paternity leave do I get?")
    assert finder.retriever.translation(ctx.question)
    (hits,) = finder.retrieve.run(ctx)
    assert "陪产假十五天" in hits[0].chunk.text, [h.chunk.file for h in hits[:5]]
