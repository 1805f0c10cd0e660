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
