"""Hybrid search over a real slice of the lawref statutes, judged by the dataset's own hit rule."""

from __future__ import annotations

import pytest

from rag.evaluation import evaluate, first_hit_rank, load_questions
from tests.conftest import build
from tests.lawref_subset import make_subset


@pytest.fixture(scope="module")
def lawref_kb(tmp_path_factory, shared_data_dir):
    from rag.knowledge_base import KnowledgeBase
    from rag.config import Settings

    subset = make_subset(tmp_path_factory.mktemp("lawref"))
    kb = KnowledgeBase(Settings(data_dir=shared_data_dir, _env_file=None), subset / "index")
    report = build(kb, [subset / "docs"])
    assert report.indexed == 8 and not report.skipped
    return kb, load_questions(subset / "questions.jsonl")


def test_subset_has_real_questions(lawref_kb):
    _, questions = lawref_kb
    assert len(questions) >= 25


@pytest.mark.parametrize(("mode", "min_recall_at_5"), [("hybrid", 0.85), ("bm25", 0.8), ("dense", 0.85)])
def test_gold_articles_are_found(lawref_kb, mode, min_recall_at_5):
    kb, questions = lawref_kb
    metrics = evaluate(questions, lambda q: kb.retriever.search(q, top_k=10, mode=mode), recall_at=(1, 5, 10))
    assert metrics.recall[5] >= min_recall_at_5, metrics.to_dict()


def test_hybrid_hits_carry_both_retrievers_and_citable_metadata(lawref_kb):
    kb, questions = lawref_kb
    question = next(q for q in questions if "旅游" in q.question)
    hits = kb.retriever.search(question.question, top_k=5)
    assert first_hit_rank(hits, question.gold) is not None
    top = hits[0]
    assert set(top.ranks) <= {"dense", "bm25"} and top.ranks
    assert any(len(h.ranks) == 2 for h in hits), "fusion merges both retrievers' lists"
    assert top.chunk.title.startswith("最高人民") and top.chunk.doc_date.count("-") == 2
    assert top.chunk.heading_path or top.chunk.text.startswith("第")


def test_path_filter_limits_results_to_one_statute(lawref_kb):
    kb, _ = lawref_kb
    target = "司法解释/最高人民法院关于审理物业服务纠纷案件适用法律若干问题的解释(2020-12-29).md"
    hits = kb.retriever.search("物业费", top_k=5, path_prefix=target)
    assert hits and {h.chunk.file for h in hits} == {target}


def test_score_fusion_finds_the_gold_articles_and_scores_every_hit_both_ways(lawref_kb):
    from rag.index.retrieval import FusionConfig, Retriever

    kb, questions = lawref_kb
    retriever = Retriever(kb.store, kb.embedder, FusionConfig(method="scores"))
    metrics = evaluate(questions, lambda q: retriever.search(q, top_k=10), recall_at=(1, 5, 10))
    assert metrics.recall[5] >= 0.85, metrics.to_dict()
    hits = retriever.search(questions[0].question, top_k=20)
    assert all(set(h.scores) == {"dense", "bm25"} and 0 < h.scores["dense"] <= 1.0001 for h in hits)
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    retriever.close()
