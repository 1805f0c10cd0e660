"""The passages an answer is made from when the knowledge base holds both languages (rag.answering.pools)."""

from __future__ import annotations

import numpy as np

from rag.answering.pools import draws, joined
from rag.types import Chunk, Hit

GENERAL = np.array([[1.0, 0.0, 0.0]])  # topic-free questions in the asker's language


def hit(n: int, text: str, dense: float) -> Hit:
    chunk = Chunk(f"c{n}", f"f{n}.md", f"Doc {n}", (), text, 0, len(text), None, None, "", "2026-01-01")
    return Hit(chunk, 1.0 - n / 100, {}, {"dense": dense})


def answer_passages(language: str, hits: list[Hit], top_k: int, vectors, general, other: int = 3,
                    demotions: dict[str, float] | None = None):
    """The passages the draws of `hits` (ranked as found) give, with `demotions` applied."""
    drawn = draws(language, hits, [h.score for h in hits], top_k, vectors, general, other)
    return joined(drawn, demotions or {}).passages


def no_vectors(chunks):
    raise AssertionError("a knowledge base of one language needs no vectors")


def test_a_knowledge_base_of_one_language_keeps_the_top_passages():
    hits = [hit(n, f"English passage number {n}.", 0.8) for n in range(8)]
    chosen = answer_passages("zh", hits, 5, no_vectors, lambda: GENERAL)
    assert [c.id for c in chosen] == ["c0", "c1", "c2", "c3", "c4"]


def test_the_other_languages_best_by_meaning_join_the_top_passages():
    """A Chinese question: five Chinese passages on top, then English ones. The English pointer close to
    every Chinese question loses its lead to the first-day section, which ranked lower."""
    hits = [hit(n, f"中文段落第{n}条的内容。", 0.88) for n in range(5)]
    hits += [hit(5, "Employees of the China office follow 年假与请假制度.", 0.844),  # close to every question
             hit(6, "Meetings to expect in your first week.", 0.814),
             hit(7, "Holidays of 2026.", 0.80),
             hit(8, "Arrive at 9:30 at the reception desk on your first day.", 0.812)]
    general = {"c5": 0.82, "c6": 0.75, "c7": 0.79, "c8": 0.74}

    def vectors(chunks):
        return np.array([[general[c.id], 0.0, 0.0] for c in chunks])

    chosen = answer_passages("zh", hits, 5, vectors, lambda: GENERAL, other=2)
    assert [c.id for c in chosen] == ["c0", "c1", "c2", "c3", "c4", "c8", "c6"]


def test_an_other_language_passage_already_on_top_is_not_repeated():
    hits = [hit(0, "Arrive at 9:30 at the reception desk.", 0.83)]
    hits += [hit(n, f"中文段落第{n}条的内容。", 0.88) for n in range(1, 6)]
    hits += [hit(6, "Meetings to expect in your first week.", 0.81)]
    chosen = answer_passages("zh", hits, 5, lambda cs: np.zeros((len(cs), 3)), lambda: GENERAL, other=2)
    assert [c.id for c in chosen] == ["c0", "c1", "c2", "c3", "c4", "c6"]


def test_a_passage_people_flagged_ranks_lower_in_every_draw():
    """An English question on an English and Chinese knowledge base: the Chinese entitlement rule, flagged
    for it by two people (factor 0.25), left the top passages, and the other language's draw, by meaning
    alone, brought it back."""
    hits = [hit(n, f"English passage number {n}.", 0.85) for n in range(4)]
    hits += [hit(4, "年假天数：已满一年不满十年的，年假五天。", 0.84),
             hit(5, "English passage number 5.", 0.83),
             hit(6, "年假须提前五个工作日申请。", 0.82),
             hit(7, "当年未休完的年假可顺延至次年三月三十一日。", 0.81)]

    def vectors(chunks):
        return np.zeros((len(chunks), 3))

    before = answer_passages("en", hits, 5, vectors, lambda: GENERAL, other=2)
    assert [c.id for c in before] == ["c0", "c1", "c2", "c3", "c4", "c6"]
    after = answer_passages("en", hits, 5, vectors, lambda: GENERAL, other=2, demotions={"c4": 0.25})
    assert [c.id for c in after] == ["c0", "c1", "c2", "c3", "c5", "c6", "c7"]
    alone = answer_passages("en", hits[:5], 5, vectors, lambda: GENERAL, other=2, demotions={"c4": 0.25})
    assert "c4" in [c.id for c in alone], "demoted, not removed: nothing better took its place"
