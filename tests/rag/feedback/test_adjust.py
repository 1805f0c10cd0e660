"""What votes do to retrieval: thresholds, admins, one person many votes, decay, undo, several processes."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from rag.feedback import ANSWER, CitedChunk, FeedbackAdjuster, FeedbackRules, FeedbackStore, citation_target
from rag.types import Scope

CITED = [CitedChunk("c-meals", "travel.md", "Travel › Meals · v1", "Meals are 45 EUR."),
         CitedChunk("c-hotels", "travel.md", "Travel › Hotels · v1", "Hotels are 150 EUR.")]
DAY = 86400.0


def unit(*values: float) -> np.ndarray:
    v = np.array(values, dtype=np.float32)
    return v / np.linalg.norm(v)


@pytest.fixture
def clock():
    return [1_000_000_000.0]


@pytest.fixture
def store(tmp_path, clock):
    return FeedbackStore(tmp_path / "f.sqlite3", retention_days=0, clock=lambda: clock[0])


def adjuster(store, **rules) -> FeedbackAdjuster:
    return FeedbackAdjuster(store, FeedbackRules(similarity_en=0.9, **rules))


def answered(store, vector=(1, 0, 0), question="meal allowance?") -> str:
    return store.record_answer(question, "45 EUR [1]. Hotels [2].", CITED, "v1", "C1", "U0", unit(*vector))


def test_a_down_vote_on_a_whole_answer_never_demotes_a_passage(store):
    rules = adjuster(store)
    for n in range(5):
        store.vote(answered(store), f"U{n}", ANSWER, -1, "C1")
    assert rules.demotions(unit(1, 0, 0)) == {}


def test_one_flag_is_not_enough_two_people_are_and_one_person_counts_once(store):
    rules = adjuster(store)
    first, second = answered(store), answered(store)
    store.vote(first, "U1", citation_target(1), -1, "C1")
    store.vote(second, "U1", citation_target(1), -1, "C1")  # the same person again, on another answer
    assert rules.demotions(unit(1, 0, 0)) == {}
    assert [a.status for a in rules.adjustments()] == ["pending"]
    store.vote(second, "U2", citation_target(1), -1, "C1")
    assert rules.demotions(unit(1, 0.1, 0)) == {"c-meals": pytest.approx(0.25)}
    assert rules.demotions(unit(0, 1, 0)) == {}, "an unrelated question is not affected"
    adjustment = rules.adjustments()[0]
    assert (adjustment.status, adjustment.flaggers, adjustment.cited.text) == ("demoted", ["U1", "U2"], "Meals are 45 EUR.")


def test_helped_votes_count_against_flags(store):
    rules = adjuster(store)
    answer = answered(store)
    for user in ("U1", "U2"):
        store.vote(answer, user, citation_target(2), -1, "C1")
    assert "c-hotels" in rules.demotions(unit(1, 0, 0))
    store.vote(answer, "U3", citation_target(2), 1, "C1")  # "this source helped"
    assert rules.demotions(unit(1, 0, 0)) == {}
    store.vote(answer, "U2", citation_target(2), 1, "C1")  # a flagger changes their mind
    assert [(a.flaggers, sorted(a.helpers), a.status) for a in rules.adjustments()] == [(["U1"], ["U2", "U3"], "pending")]


def test_an_admin_flag_or_confirmation_is_enough_and_undo_voids_the_votes(store, clock):
    rules = adjuster(store)
    answer = answered(store)
    store.vote(answer, "UADMIN", citation_target(1), -1, "C1", admin=True)
    assert rules.demotions(unit(1, 0, 0)) == {"c-meals": pytest.approx(0.5)}
    store.record_verdict("c-meals", "undo", "UADMIN")
    assert rules.demotions(unit(1, 0, 0)) == {} and rules.adjustments() == []
    clock[0] += 60
    store.vote(answer, "U1", citation_target(1), -1, "C1")  # a new flag after the undo counts again…
    assert rules.demotions(unit(1, 0, 0)) == {}, "…but alone it is not enough"
    store.record_verdict("c-meals", "confirm", "UADMIN")
    assert rules.demotions(unit(1, 0, 0)) == {"c-meals": pytest.approx(0.5 ** 3)}
    assert rules.adjustments()[0].admin


def test_flags_in_one_scope_do_not_move_rankings_in_another(store):
    rules = adjuster(store)
    hr = Scope(frozenset({"hr", "public"}), frozenset())
    answer = store.record_answer("meal allowance?", "45 EUR [1].", CITED, "v1", "C0HR", "U0", unit(1, 0, 0),
                                 scope=hr)
    for user in ("U1", "U2"):
        store.vote(answer, user, citation_target(1), -1, "C0HR")
    assert rules.demotions(unit(1, 0, 0), scope=hr) == {"c-meals": pytest.approx(0.25)}
    assert rules.demotions(unit(1, 0, 0), scope=Scope(frozenset({"public", "hr"}), frozenset({"U9"}))) != {}, \
        "the same collections, asked by someone else in a direct message"
    assert rules.demotions(unit(1, 0, 0), scope=Scope(frozenset({"eng", "public"}), frozenset())) == {}
    assert rules.demotions(unit(1, 0, 0)) == {}, "nor where every collection is searched"
    assert store.answer(answer).scope == "hr,public"


def test_the_admins_list_judges_each_scope_on_its_own_votes(store):
    rules = adjuster(store)
    for user, scope in (("U1", Scope(frozenset({"hr"}), frozenset())), ("U2", Scope(frozenset({"eng"}), frozenset()))):
        answer = store.record_answer("meal allowance?", "45 EUR [1].", CITED, "v1", "C1", "U0", unit(1, 0, 0),
                                     scope=scope)
        store.vote(answer, user, citation_target(1), -1, "C1")
    listed = sorted((a.scope, a.status, a.flaggers) for a in rules.adjustments())
    assert listed == [("eng", "pending", ["U2"]), ("hr", "pending", ["U1"])], "one flag in each: demoted nowhere"


def test_demotions_fade_with_the_half_life(store, clock):
    rules = adjuster(store, half_life_days=90)
    answer = answered(store)
    for user in ("U1", "U2"):
        store.vote(answer, user, citation_target(1), -1, "C1")
    assert rules.demotions(unit(1, 0, 0))["c-meals"] == pytest.approx(0.25)
    clock[0] += 90 * DAY
    assert rules.demotions(unit(1, 0, 0))["c-meals"] == pytest.approx(0.5)
    clock[0] += 90 * 6 * DAY
    assert rules.demotions(unit(1, 0, 0)) == {}
    assert rules.adjustments()[0].status == "faded"


def test_a_vote_in_another_process_is_seen_at_once(store, tmp_path):
    rules = adjuster(store)
    answer = answered(store)
    store.vote(answer, "U1", citation_target(1), -1, "C1")
    assert rules.demotions(unit(1, 0, 0)) == {}
    script = (
        "import sys; from pathlib import Path; from rag.feedback import FeedbackStore, citation_target; "
        f"FeedbackStore(Path(sys.argv[1]), retention_days=0).vote({answer!r}, 'U2', citation_target(1), -1, 'C9')"
    )
    subprocess.run([sys.executable, "-c", script, str(tmp_path / "f.sqlite3")], check=True, timeout=60)
    assert rules.demotions(unit(1, 0, 0)) == {"c-meals": pytest.approx(0.25)}


def test_a_thousand_votes_are_applied_quickly_enough_to_read_on_every_question(store):
    rules = adjuster(store)
    rng = np.random.default_rng(3)
    for n in range(200):
        answer = answered(store, vector=tuple(rng.normal(size=3)), question=f"q{n}")
        for user in range(5):
            store.vote(answer, f"U{user}", citation_target(1 + n % 2), -1, "C1")
    demoted = rules.demotions(unit(1, 0, 0))
    assert demoted and set(demoted) <= {"c-meals", "c-hotels"}


def test_a_demotion_ends_when_a_reindex_changes_the_passage_text(kb, tmp_path):
    from rag.feedback import FeedbackAdjuster, FeedbackRules

    docs = tmp_path / "docs"
    docs.mkdir()
    policy = docs / "parking.md"
    policy.write_text("# Parking\n\nNorth garage permits cost 40 EUR a month and are renewed at reception.\n\n"
                      "# Canteen\n\nThe canteen serves lunch from noon to two.\n", encoding="utf-8")
    kb.refresh([docs])
    question = "How much is a parking permit?"
    hit = kb.retriever.search(question, top_k=1)[0]
    vector = kb.embedder.embed_query(question)
    store = kb.feedback
    rules = FeedbackAdjuster(store, FeedbackRules())
    cited = CitedChunk(hit.chunk.id, hit.chunk.file, "Parking", hit.chunk.text)
    answer = store.record_answer(question, "40 EUR [1].", [cited], "v1", "C1", "U0", vector)
    for user in ("U1", "U2"):
        store.vote(answer, user, citation_target(1), -1, "C1")
    live = kb.retriever.snapshot.by_id.__contains__
    assert rules.demotions(vector) == {hit.chunk.id: pytest.approx(0.25)}
    assert rules.adjustments(live)[0].status == "demoted"

    policy.write_text(policy.read_text(encoding="utf-8").replace("40 EUR", "45 EUR"), encoding="utf-8")
    kb.refresh(None)
    new = kb.retriever.search(question, top_k=1)[0].chunk
    assert new.id != hit.chunk.id and "45 EUR" in new.text
    assert new.id not in rules.demotions(vector), "the corrected passage starts afresh"
    assert rules.adjustments(kb.retriever.snapshot.by_id.__contains__)[0].status == "passage changed"
