"""What feedback does to retrieval: demote a passage for similar questions, only when enough people agree.

A whole-answer 👍/👎 never moves a passage: it does not say which passage was wrong. "This source is
wrong" on a citation does, once at least `min_voters` different people flagged the passage (each
person's latest vote counts once, and "this source helped" counts against a flag), or an admin flagged
or confirmed it. The demotion multiplies the passage's retrieval score by `penalty ** strength` (a score
below zero is lowered by as much: `lowered`), where strength is the flags minus the helps, each fading with
`half_life_days`; it applies to questions similar to the ones the votes were given on. An admin's confirm
counts as an admin's flag on the votes a passage has; an undo voids them (and the confirm) so far. A reindex
that changes the passage's text gives it a new id, so old votes no longer match it.

Every process reads the adjustments from the shared store and refreshes when the store changed.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace

import numpy as np

from rag.feedback.store import CitationVote, CitedChunk, FeedbackStore, PassageVerdict
from rag.types import EVERYTHING, Scope

DAY = 86400.0


@dataclass(frozen=True)
class FeedbackRules:
    min_voters: int = 2  # distinct people (net of "helped") before a passage is demoted
    half_life_days: float = 90.0
    # How similar a question must be to one the votes were given on, per question language: practically
    # the same question. Measured with benchmarks/feedback_loop.py (BENCHMARKS.md): below these levels, flags
    # given on one question start to demote the right passage of another one that merely looks alike
    # ("What type of problem is the traveling salesman problem?" vs "…what does its answer fail to tell?").
    # The embedded model's Chinese cosines run higher than its English ones.
    similarity_zh: float = 0.98
    similarity_en: float = 0.97
    penalty: float = 0.5  # score factor per unit of strength
    faded: float = 0.05  # strength below which an adjustment has faded out

    def __post_init__(self) -> None:
        if self.min_voters < 1 or self.half_life_days <= 0 or not 0 < self.penalty < 1:
            raise ValueError("min_voters ≥ 1, half_life_days > 0 and 0 < penalty < 1 are required")

    def similarity(self, language: str) -> float:
        return self.similarity_zh if language == "zh" else self.similarity_en



@dataclass
class Adjustment:
    """The votes on one passage and what they do (for listing, review and undo)."""

    chunk_id: str
    cited: CitedChunk  # the passage as it was last cited
    flaggers: list[str] = field(default_factory=list)
    helpers: list[str] = field(default_factory=list)
    admin: bool = False  # flagged or confirmed by an admin
    strength: float = 0.0
    last_vote: float = 0.0
    questions: list[str] = field(default_factory=list)
    status: str = "pending"  # "demoted", "pending" (not enough people yet), "faded", "passage changed"
    scope: str = ""  # the collections the votes were given in (Scope.collections_key; "" = every collection)

    def to_dict(self) -> dict:
        return {"chunk_id": self.chunk_id, "file": self.cited.file, "location": self.cited.location,
                "text": self.cited.text, "flaggers": self.flaggers, "helpers": self.helpers, "admin": self.admin,
                "strength": round(self.strength, 4), "last_vote": self.last_vote, "questions": self.questions,
                "status": self.status, "scope": self.scope}


class FeedbackAdjuster:
    def __init__(self, store: FeedbackStore, rules: FeedbackRules | None = None,
                 clock: Callable[[], float] | None = None) -> None:
        self.store = store
        self.rules = rules or FeedbackRules()
        self._clock = clock or store.now
        self._lock = threading.Lock()
        self._seen: tuple[int, int] | None = None
        self._votes: list[CitationVote] = []
        self._vectors = np.zeros((0, 0), dtype=np.float32)
        self._voided: dict[str, float] = {}  # chunk id -> time of the last undo
        self._confirmed: dict[str, float] = {}  # chunk id -> time of the last confirm (after any undo)

    def _refresh(self) -> None:
        version = self.store.data_version
        if version == self._seen:
            return
        with self._lock:
            votes = self.store.citation_votes()
            self._voided, self._confirmed = _verdicts(self.store.verdicts())
            self._votes = [v for v in votes if v.updated > self._voided.get(v.chunk_id, -1.0)]
            dims = {len(v.question_vector) for v in self._votes if v.question_vector is not None}
            dim = max(dims, default=0)
            self._vectors = np.vstack([
                v.question_vector if v.question_vector is not None and len(v.question_vector) == dim
                else np.zeros(dim, dtype=np.float32) for v in self._votes
            ]) if self._votes else np.zeros((0, dim), dtype=np.float32)
            self._seen = version

    def demotions(self, question_vector: np.ndarray, language: str = "en",
                  scope: Scope = EVERYTHING) -> dict[str, float]:
        """chunk id → score multiplier (< 1) for a question with this embedding, in this language, asked
        where `scope` applies: only votes given on answers from the same collections count."""
        self._refresh()
        q = np.asarray(question_vector, dtype=np.float32)
        near: list[CitationVote] = []
        if len(self._votes) and self._vectors.shape[1] == len(q):
            near = [self._votes[i] for i in np.flatnonzero(self._vectors @ q >= self.rules.similarity(language))]
            near = [v for v in near if v.scope == scope.collections_key]
        factors = {}
        for adjustment in self._judge(near):
            if adjustment.status == "demoted":
                factors[adjustment.chunk_id] = self.rules.penalty ** adjustment.strength
        return factors

    def adjustments(self, live: Callable[[str], bool] | None = None, since: float | None = None) -> list[Adjustment]:
        """Every passage with votes (on any question), one entry per scope it was voted in — votes count only
        where they were given — most flagged first; `live` tells whether a chunk id is still in the index (a
        passage whose text changed is reported as such)."""
        self._refresh()
        by_scope: dict[str, list[CitationVote]] = {}
        for vote in self._votes:
            if since is None or vote.updated >= since:
                by_scope.setdefault(vote.scope, []).append(vote)
        found = [replace(a, scope=scope) for scope, votes in by_scope.items() for a in self._judge(votes)]
        for adjustment in found:
            if live is not None and not live(adjustment.chunk_id):
                adjustment.status = "passage changed"
        return sorted(found, key=lambda a: (a.status != "demoted", -(len(a.flaggers) - len(a.helpers)),
                                            -a.last_vote))

    def _judge(self, votes: Iterable[CitationVote]) -> list[Adjustment]:
        by_chunk: dict[str, list[CitationVote]] = {}
        for vote in votes:
            by_chunk.setdefault(vote.chunk_id, []).append(vote)
        return [self._adjust(chunk_id, chunk_votes) for chunk_id, chunk_votes in by_chunk.items()]

    def _adjust(self, chunk_id: str, votes: list[CitationVote]) -> Adjustment:
        rules, now = self.rules, self._clock()
        latest: dict[str, CitationVote] = {}
        for vote in sorted(votes, key=lambda v: v.updated):  # one person, many votes: the last one counts
            latest[vote.user] = vote
        newest = max(latest.values(), key=lambda v: v.updated)
        adjustment = Adjustment(chunk_id, newest.cited, last_vote=newest.updated,
                                questions=list(dict.fromkeys(v.question for v in votes)))

        def weight(at: float) -> float:
            return 0.5 ** (max(0.0, now - at) / DAY / rules.half_life_days)

        for user, vote in latest.items():
            (adjustment.flaggers if vote.value < 0 else adjustment.helpers).append(user)
            adjustment.strength += -vote.value * weight(vote.updated)
            adjustment.admin |= vote.admin and vote.value < 0
        if chunk_id in self._confirmed:
            adjustment.admin = True
            adjustment.strength += rules.min_voters * weight(self._confirmed[chunk_id])
        enough = adjustment.admin or len(adjustment.flaggers) - len(adjustment.helpers) >= rules.min_voters
        if enough and adjustment.strength >= rules.faded:
            adjustment.status = "demoted"
        elif enough:
            adjustment.status = "faded"
        return adjustment


def _verdicts(verdicts: list[PassageVerdict]) -> tuple[dict[str, float], dict[str, float]]:
    voided: dict[str, float] = {}
    confirmed: dict[str, float] = {}
    for verdict in verdicts:  # in time order
        if verdict.action == "undo":
            voided[verdict.chunk_id] = verdict.created
            confirmed.pop(verdict.chunk_id, None)
        else:
            confirmed[verdict.chunk_id] = verdict.created
    return voided, confirmed


def lowered(score: float, factor: float) -> float:
    """`score` lowered by a demotion `factor` (0 < factor ≤ 1): multiplied by it when positive. A negative
    score (a cross-encoder's logit, a meaning score below the others' mean) moves down by as much as a
    positive one of its size: multiplied, it would rise."""
    return score - abs(score) * (1.0 - factor)


def reorder(scores: list[float], ids: list[str], factors: dict[str, float]) -> tuple[list[int], list[float]]:
    """The order of candidates (indices) and their scores once each is lowered by its demotion factor."""
    adjusted = [lowered(score, factors.get(chunk_id, 1.0)) for score, chunk_id in zip(scores, ids)]
    return sorted(range(len(ids)), key=lambda i: -adjusted[i]), adjusted
