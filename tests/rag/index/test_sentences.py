"""Sentence vectors (rag.index.sentences): every quotable unit of every passage embedded at index time with
the real embedded model, stored with the snapshot, and read by dense retrieval beside the passage's own
vector."""

from __future__ import annotations

import numpy as np
import pytest

from rag.evaluation import first_hit_rank, load_questions
from rag.index.sentences import SENTENCES_VERSION, STARTS_FILE, unit_texts
from rag.index.work_cache import text_key
from rag.knowledge_base import KnowledgeBase
from tests.conftest import HANDBOOK, build
from tests.lawref_subset import make_subset


@pytest.fixture(scope="module")
def lawref(tmp_path_factory: pytest.TempPathFactory):
    return make_subset(tmp_path_factory.mktemp("lawref"))


def test_every_sentence_of_every_passage_is_embedded_and_stored_with_the_snapshot(kb):
    report = build(kb, [HANDBOOK])
    snapshot = kb.retriever.snapshot
    units = [unit_texts(chunk) for chunk in snapshot.chunks]
    assert report.sentences_embedded <= sum(map(len, units)) and snapshot.manifest.sentences == SENTENCES_VERSION
    stored = snapshot.sentences
    assert stored.passages == len(snapshot.chunks) and len(stored.vectors) == sum(map(len, units))
    row = max(range(len(units)), key=lambda r: len(units[r]))  # a passage of several sentences
    assert len(units[row]) >= 3
    mine = np.asarray(stored.vectors[stored.starts[row]:stored.starts[row + 1]])
    expected = np.asarray(kb.index_embedder.embed_passages(units[row]), dtype=np.float32)
    assert np.allclose(mine, expected, atol=1e-5), "each row holds its own passage's sentences, in order"
    # ... and the answer stage finds every one of them in the work cache: it embeds none while the asker waits
    keys = [text_key(t) for texts in units for t in texts]
    assert len(kb.work_cache.get_vectors(kb.index_embedder.model_id, keys)) == len(set(keys))
    # a passage is read by its best sentence: that sentence's own cosine to a question
    question = np.asarray(kb.index_embedder.embed_queries([units[row][1]])[0], dtype=np.float32)
    best = snapshot.sentence_scores([row], question)[row]
    assert best == pytest.approx(float(expected[1] @ question), abs=1e-5)
    assert best > float(snapshot.vector(snapshot.chunks[row].id) @ question)


def test_an_index_without_sentences_gets_them_on_the_next_run_without_embedding_its_passages(settings, tmp_path):
    without = KnowledgeBase(settings.model_copy(update={"sentence_search": False}), tmp_path / "kb")
    first = build(without, [HANDBOOK])
    snapshot = without.retriever.snapshot
    assert snapshot.manifest.sentences == 0 and snapshot.sentences is None
    assert not (snapshot.path / STARTS_FILE).exists()
    assert snapshot.sentence_scores([0, 1], snapshot.vector(snapshot.chunks[0].id)) == {}
    again = build(KnowledgeBase(settings, tmp_path / "kb"), None)
    assert not again.up_to_date and again.version != first.version and again.embedded == 0
    assert again.rebuild_reason is None, "the passages are kept; only their sentences are added"
    with_sentences = KnowledgeBase(settings, tmp_path / "kb").retriever.snapshot
    assert with_sentences.manifest.sentences == SENTENCES_VERSION
    assert with_sentences.sentences.passages == len(with_sentences.chunks)
    assert build(KnowledgeBase(settings, tmp_path / "kb"), None).up_to_date


def recall_at(kb: KnowledgeBase, questions, k: int) -> float:
    ranks = [first_hit_rank(kb.retriever.search(q.question, top_k=k), q.gold) for q in questions]
    return sum(r is not None for r in ranks) / len(ranks)


def test_reading_passages_by_their_sentences_finds_the_gold_article_first_more_often(settings, lawref, tmp_path):
    """Real statutes and questions asked in other words than the articles': a question matches one sentence
    of an article closely, the passage around it loosely."""
    questions = load_questions(lawref / "questions.jsonl")
    passages_only = KnowledgeBase(settings.model_copy(update={"sentence_search": False}), tmp_path / "passages")
    sentences = KnowledgeBase(settings, tmp_path / "sentences")
    build(passages_only, [lawref / "docs"])
    build(sentences, [lawref / "docs"])
    assert recall_at(sentences, questions, 1) > recall_at(passages_only, questions, 1)
    assert recall_at(sentences, questions, 10) >= recall_at(passages_only, questions, 10)
