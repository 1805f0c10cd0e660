"""Feedback in SQLite: durable, one vote per user and target, reasons, retention."""

from __future__ import annotations

import numpy as np
import pytest

from rag.feedback import ANSWER, CitedChunk, FeedbackAdjuster, FeedbackRules, FeedbackStore, citation_target, summary

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


def test_summary_ranks_down_voted_answers_with_reasons_and_flagged_passages(tmp_path):
    store = FeedbackStore(tmp_path / "f.sqlite3")
    a = store.record_answer("q1", "a", CITED, "v1", "C1", "U1", unit(1, 0))
    b = store.record_answer("q2", "b", CITED[1:], "v1", "C1", "U1", unit(0, 1))
    store.vote(a, "U2", citation_target(2), -1, "C1")
    store.vote(b, "U3", ANSWER, -1, "C1")
    store.set_reason(b, "U3", "outdated", "the limit changed in March")
    store.vote(b, "U5", ANSWER, -1, "C1")
    store.vote(a, "U4", ANSWER, 1, "C1")
    result = summary(store, FeedbackAdjuster(store))
    assert [(r["question"], r["down_votes"], r["reasons"], r["comments"]) for r in result["answers"]] == [
        ("q2", 2, {"outdated": 1}, ["the limit changed in March"])], "q1 has a 👍 and no 👎"
    assert [(p["chunk_id"], p["flaggers"], p["status"]) for p in result["passages"]] == [("c-hotels", ["U2"], "pending")]
    assert result["documents"] == [{"file": "travel.md", "flags": 1}]


def test_a_reason_belongs_to_a_down_vote_and_goes_when_the_vote_changes(tmp_path):
    store = FeedbackStore(tmp_path / "f.sqlite3")
    a = store.record_answer("q", "a", CITED, "v1", "C1", "U1")
    with pytest.raises(KeyError):
        store.set_reason(a, "U2", "incomplete")
    store.vote(a, "U2", ANSWER, -1, "C1")
    with pytest.raises(ValueError):
        store.set_reason(a, "U2", "boring")
    store.set_reason(a, "U2", "other", "  " + "x" * 3000)
    vote = store.votes()[0]
    assert vote.reason == "other" and len(vote.comment) == 2000
    store.vote(a, "U2", ANSWER, -1, "C1")
    assert store.votes()[0].reason == "other", "the same vote again keeps its reason"
    store.vote(a, "U2", ANSWER, 1, "C1")
    assert store.votes()[0].reason is None and store.votes()[0].comment is None
    with pytest.raises(KeyError):
        store.set_reason(a, "U2", "outdated")  # a reason explains a 👎, not a 👍


def test_an_older_database_is_migrated_in_place(tmp_path):
    import sqlite3

    path = tmp_path / "old.sqlite3"
    with sqlite3.connect(path) as conn:
        conn.executescript("""
            CREATE TABLE answers (answer_id TEXT PRIMARY KEY, question TEXT NOT NULL, answer TEXT NOT NULL,
                citations TEXT NOT NULL, index_version TEXT NOT NULL, channel TEXT NOT NULL, user TEXT NOT NULL,
                created REAL NOT NULL, question_vector BLOB);
            CREATE TABLE votes (answer_id TEXT NOT NULL, user TEXT NOT NULL, target TEXT NOT NULL,
                value INTEGER NOT NULL, chunk_id TEXT, channel TEXT NOT NULL, updated REAL NOT NULL,
                PRIMARY KEY (answer_id, user, target));""")
        conn.execute("INSERT INTO answers VALUES ('a1', 'q', 'a', '[]', 'v1', 'C1', 'U1', 1e9, NULL)")
        conn.execute("INSERT INTO votes VALUES ('a1', 'U2', 'answer', -1, NULL, 'C1', 1e9)")
    store = FeedbackStore(path, retention_days=0)
    vote = store.votes()[0]
    assert (vote.user, vote.value, vote.admin, vote.reason, vote.platform) == ("U2", -1, False, None, "slack")
    store.set_reason("a1", "U2", "incomplete")
    assert store.answer("a1").platform == "slack"
    assert store.answer("a1").sources is None, "what it may show uncited was not kept then"
    fresh = store.record_answer("q", "a", [], "v2", "C1", "U1", sources=["hr/b.md", "a.md", "hr/b.md"])
    assert store.answer(fresh).sources == ("a.md", "hr/b.md")
    assert store.answer(store.record_answer("q", "a", [], "v2", "C1", "U1")).sources == ()


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
    result = summary(reopened, FeedbackAdjuster(reopened))
    assert result["passages"] == [] and [a["question"] for a in result["answers"]] == ["recent question"], \
        "the old wrong-source vote no longer counts"
    assert FeedbackAdjuster(reopened, FeedbackRules(similarity_en=0.9, min_voters=1)).demotions(unit(1, 0)) == {}, \
        "nor demotes"
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
    from rag.knowledge_base import KnowledgeBase
    from rag.config import Settings

    monkeypatch.setenv("AIE_FEEDBACK_RETENTION_DAYS", "7")
    kb = KnowledgeBase.default(Settings(data_dir=tmp_path, _env_file=None))
    assert kb.feedback.retention_days == 7
    path = kb.settings.feedback_path
    old = kb.feedback.record_answer("q", "a", CITED, "v1", "C1", "U1")
    kb.feedback.close()
    _age(path, old, 8)
    assert KnowledgeBase.default(Settings(data_dir=tmp_path, _env_file=None)).feedback.answer(old) is None
