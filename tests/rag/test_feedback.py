"""Feedback in SQLite: durable, one vote per user and target, and the demotion it drives."""

from __future__ import annotations

import numpy as np
import pytest

from rag.feedback import ANSWER, CitedChunk, FeedbackAdjuster, FeedbackStore, citation_target

CITED = [CitedChunk("c-meals", "travel.md", "Travel › Meals · v1"), CitedChunk("c-hotels", "travel.md", "Travel › Hotels · v1")]


def unit(*values: float) -> np.ndarray:
    v = np.array(values, dtype=np.float32)
    return v / np.linalg.norm(v)


def test_votes_survive_a_restart_and_a_second_vote_updates(tmp_path):
    path = tmp_path / "feedback.sqlite3"
    store = FeedbackStore(path)
    answer_id = store.record_answer("meal allowance?", "45 EUR [1].", CITED, "v1", "C1", "U1", unit(1, 0))
    assert store.vote(answer_id, "U2", ANSWER, -1, "C1") is True
    assert store.vote(answer_id, "U2", ANSWER, 1, "C1") is False
    store.close()
    reopened = FeedbackStore(path)
    votes = reopened.votes()
    assert len(votes) == 1 and votes[0].value == 1 and votes[0].user == "U2"
    row = reopened.export()[0]
    assert row["question"] == "meal allowance?" and row["index_version"] == "v1"
    assert [c["chunk_id"] for c in row["citations"]] == ["c-meals", "c-hotels"]


def test_citation_votes_name_the_chunk_and_bad_targets_are_refused(tmp_path):
    store = FeedbackStore(tmp_path / "f.sqlite3")
    answer_id = store.record_answer("q", "a [1][2]", CITED, "v1", "C1", "U1", unit(1, 0))
    store.vote(answer_id, "U2", citation_target(2), -1, "C1")
    assert store.votes()[0].chunk_id == "c-hotels"
    with pytest.raises(ValueError):
        store.vote(answer_id, "U2", citation_target(3), -1, "C1")
    with pytest.raises(ValueError):
        store.vote(answer_id, "U2", ANSWER, 0, "C1")
    with pytest.raises(KeyError):
        store.vote("nope", "U2", ANSWER, -1, "C1")


def test_summary_ranks_down_voted_documents_and_citations(tmp_path):
    store = FeedbackStore(tmp_path / "f.sqlite3")
    a = store.record_answer("q1", "a", CITED, "v1", "C1", "U1")
    b = store.record_answer("q2", "b", CITED[1:], "v1", "C1", "U1")
    store.vote(a, "U2", citation_target(2), -1, "C1")
    store.vote(b, "U3", ANSWER, -1, "C1")
    store.vote(a, "U4", ANSWER, 1, "C1")
    summary = store.summary()
    assert summary["citations"][0] == {"chunk_id": "c-hotels", "file": "travel.md", "location": "Travel › Hotels · v1",
                                       "down_votes": 2}
    assert summary["documents"] == [{"file": "travel.md", "down_votes": 2}]


def test_down_votes_demote_only_for_similar_questions(tmp_path):
    store = FeedbackStore(tmp_path / "f.sqlite3")
    adjuster = FeedbackAdjuster(store, similarity=0.9, penalty=0.5)
    answer_id = store.record_answer("q", "a", CITED, "v1", "C1", "U1", unit(1, 0, 0))
    assert adjuster.demotions(unit(1, 0, 0)) == {}
    store.vote(answer_id, "U2", citation_target(1), -1, "C1")
    assert adjuster.demotions(unit(1, 0.1, 0)) == {"c-meals": 0.5}
    assert adjuster.demotions(unit(0, 1, 0)) == {}, "an unrelated question is not affected"
    store.vote(answer_id, "U3", ANSWER, -1, "C1")
    assert adjuster.demotions(unit(1, 0, 0)) == {"c-meals": pytest.approx(0.5 * 0.5 ** 0.5),
                                                  "c-hotels": pytest.approx(0.5 ** 0.5)}
    store.vote(answer_id, "U2", citation_target(1), 1, "C1")  # changed their mind
    assert "c-meals" in adjuster.demotions(unit(1, 0, 0)) and adjuster.demotions(unit(1, 0, 0))["c-meals"] > 0.5


def _age(path, answer_id: str, days: float) -> None:
    import sqlite3
    import time

    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE answers SET created = ? WHERE answer_id = ?", (time.time() - days * 86400, answer_id))


def test_answers_older_than_the_retention_are_pruned_with_their_votes_on_open(tmp_path):
    path = tmp_path / "f.sqlite3"
    store = FeedbackStore(path)
    old = store.record_answer("old question", "a [1]", CITED, "v1", "C1", "U1", unit(1, 0))
    recent = store.record_answer("recent question", "b [1]", CITED, "v1", "C1", "U1", unit(0, 1))
    store.vote(old, "U2", citation_target(1), -1, "C1")
    store.vote(recent, "U3", ANSWER, -1, "C1")
    store.close()
    _age(path, old, 181)
    _age(path, recent, 179)
    reopened = FeedbackStore(path)  # default retention: 180 days
    assert reopened.answer(old) is None and reopened.answer(recent) is not None
    assert [row["question"] for row in reopened.export()] == ["recent question"]
    assert reopened.summary()["citations"] == [
        {"chunk_id": c.chunk_id, "file": "travel.md", "location": c.location, "down_votes": 1} for c in CITED
    ], "the old wrong-source vote no longer counts"
    assert FeedbackAdjuster(reopened, similarity=0.9).demotions(unit(1, 0)) == {}, "nor demotes"
    with pytest.raises(KeyError):
        reopened.vote(old, "U4", ANSWER, 1, "C1")


def test_a_running_store_prunes_at_most_once_an_hour_when_answers_are_recorded(tmp_path):
    day = 86400
    now = [1_000_000_000.0]
    store = FeedbackStore(tmp_path / "f.sqlite3", retention_days=30, clock=lambda: now[0])
    first = store.record_answer("q1", "a", CITED, "v1", "C1", "U1")
    store.vote(first, "U2", ANSWER, -1, "C1")
    now[0] += 30 * day + 60  # q1 is now past the retention…
    second = store.record_answer("q2", "b", CITED, "v1", "C1", "U1")
    assert store.answer(first) is None and store.votes() == [], "…and the next answer recorded prunes it"
    now[0] += 30 * day - 600  # q2 is 10 minutes short of the retention: this pass keeps it
    store.record_answer("q3", "c", CITED, "v1", "C1", "U1")
    assert store.answer(second) is not None
    now[0] += 660  # q2 is past the retention, but the last pass was 11 minutes ago
    store.record_answer("q4", "d", CITED, "v1", "C1", "U1")
    assert store.answer(second) is not None, "no more than one pass an hour"
    now[0] += 3600
    store.record_answer("q5", "e", CITED, "v1", "C1", "U1")
    assert store.answer(second) is None


def test_retention_zero_keeps_everything(tmp_path):
    path = tmp_path / "f.sqlite3"
    store = FeedbackStore(path)
    old = store.record_answer("q", "a", CITED, "v1", "C1", "U1")
    store.close()
    _age(path, old, 5000)
    assert FeedbackStore(path, retention_days=0).answer(old) is not None


def test_the_retention_setting_reaches_the_store(tmp_path, monkeypatch):
    from ai_employee.wiring import KnowledgeBase
    from rag.config import Settings

    monkeypatch.setenv("AIE_FEEDBACK_RETENTION_DAYS", "7")
    kb = KnowledgeBase.default(Settings(data_dir=tmp_path, _env_file=None))
    assert kb.feedback.retention_days == 7
    path = kb.settings.feedback_path
    old = kb.feedback.record_answer("q", "a", CITED, "v1", "C1", "U1")
    kb.feedback.close()
    _age(path, old, 8)
    assert KnowledgeBase.default(Settings(data_dir=tmp_path, _env_file=None)).feedback.answer(old) is None
