from __future__ import annotations

from rag.config import Settings
from rag.knowledge_base import KnowledgeBase, make_pipeline
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


def test_an_answer_searches_the_version_it_opened_though_a_newer_one_is_published(tmp_path, shared_data_dir):
    """The passages an answer quotes and the term weights it judges them by come from one index version: one
    published while it searches is the next answer's."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "parking.md").write_text("# Parking\n\nVisitors park on level two of the garage.\n", encoding="utf-8")
    kb = KnowledgeBase(Settings(data_dir=shared_data_dir, _env_file=None), tmp_path / "index")
    kb.refresh([docs])
    finder = make_pipeline(kb).finder
    ctx = opened(finder, "Where do visitors park?")
    (docs / "parking.md").write_text("# Parking\n\nVisitors park on level five of the garage.\n", encoding="utf-8")
    kb.refresh([docs])
    assert finder.retriever.snapshot.version != ctx.version
    (hits,) = finder.retrieve.run(ctx)
    assert "level two" in hits[0].chunk.text
    (hits,) = finder.retrieve.run(opened(finder, "Where do visitors park?"))
    assert "level five" in hits[0].chunk.text
