"""The one object an answer's stages read and write: what was asked, and what each stage found."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from rag.judging import analysis as question_analysis
from rag.judging.analysis import QuestionAnalysis
from rag.judging.evidence import Evidence
from rag.judging.gate import GateDecision
from rag.judging.judge import Judgement
from rag.index.search_index import SearchIndex
from rag.words.lexical import Idf
from rag.judging.parts import Part
from rag.judging.quotable import Unit
from rag.types import EVERYTHING, Chunk, Hit, Scope


@dataclass
class Candidates:
    """The passages that may answer a question, best first."""

    hits: list[Hit]
    rerank_scores: list[float] | None = None  # aligned with hits when a reranker scored them
    order: str = "fused"  # "reranker:<model>" or "fused"
    cached: bool = False  # read from the candidate cache, not searched afresh
    # chunk id -> score factor of the passages people flagged as wrong for similar questions (rag.feedback);
    # applied where the answer's passages are drawn (rag.answering.pools.joined)
    demotions: dict[str, float] = field(default_factory=dict)

    @property
    def ranking_scores(self) -> list[float]:
        """The scores the hits are ranked by: the reranker's when it scored them, else the fused ones."""
        return self.rerank_scores if self.rerank_scores is not None else [h.score for h in self.hits]

    @property
    def demoted(self) -> list[str]:
        """The ids of the hits people flagged for similar questions."""
        return [h.chunk.id for h in self.hits if h.chunk.id in self.demotions]


@dataclass
class AnswerContext:
    """One question on its way to an answer. The inputs are set when it starts; each stage adds its output
    (`rewritten` … `judgement`) and may record how long it took, a notice for the asker and a model failure."""

    question: str
    history: list[tuple[str, str]] = field(default_factory=list)
    scope: Scope = EVERYTHING
    snapshot: SearchIndex | None = None  # the index this answer reads, loaded once (off the event loop)
    version: str = ""  # ... its version
    idf: Idf | None = None  # ... its term weights
    began: float = field(default_factory=time.perf_counter)
    timings: dict[str, float] = field(default_factory=dict)
    notices: list[str] = field(default_factory=list)  # degraded service the asker should know about
    failures: list[str] = field(default_factory=list)  # "<role>:<kind>" of each model call that failed
    rewritten: str | None = None
    candidates: Candidates | None = None
    sources: list[Chunk] = field(default_factory=list)  # the passages the answer is made from
    parts: list[Part] = field(default_factory=list)  # the asks of a question that asks more than one thing
    asked_sources: int | None = None  # how many of `sources` the question found (then each ask's own joined)
    analysis: QuestionAnalysis | None = None  # the question as judging reads it (`analysed`)
    # The evidence, the near-miss terms, the gate's decision and the quotes (rag.judging.judge)
    judgement: Judgement | None = None

    def analysed(self) -> QuestionAnalysis:
        """The question (and its rewrite) analysed once, with the index's term weights: the first call
        analyses it, the later ones read that (a new rewrite is analysed afresh)."""
        if self.analysis is None or (self.analysis.text, self.analysis.rewritten) != (self.question, self.rewritten):
            if self.idf is None:
                raise RuntimeError("the answer's index is not loaded yet")
            self.analysis = question_analysis.analyse(self.question, self.rewritten, self.idf)
        return self.analysis

    @property
    def evidence(self) -> Evidence | None:
        return self.judgement.evidence if self.judgement is not None else None

    @property
    def decision(self) -> GateDecision | None:
        return self.judgement.decision if self.judgement is not None else None

    @property
    def quotes(self) -> list[list[Unit]] | None:
        """The excerpts an extractive answer quotes."""
        return self.judgement.quotes if self.judgement is not None else None

    @property
    def unanswered(self) -> list[Part]:
        """The asks of the question no passage answers."""
        return self.judgement.unanswered if self.judgement is not None else []

    @property
    def question_sources(self) -> list[Chunk]:
        """The passages the question found, without those its asks joined (rag.answering.parts)."""
        return self.sources if self.asked_sources is None else self.sources[: self.asked_sources]

    @property
    def index(self) -> SearchIndex:
        if self.snapshot is None:
            raise RuntimeError("the answer's index is not loaded yet")
        return self.snapshot

    @property
    def query(self) -> str:
        """What retrieval and the gate read: the rewrite when there is one, else the question."""
        return self.rewritten or self.question

    @property
    def hits(self) -> list[Hit]:
        return self.candidates.hits if self.candidates is not None else []

    def took(self, stage: str, since: float) -> None:
        """Record a stage's time in milliseconds, as `Answer.timings_ms` reports it."""
        self.timings[stage] = ms(since)

    def failed(self, role: str, kind: str, notice: str) -> None:
        self.failures.append(f"{role}:{kind}")
        self.notices.append(notice)


def ms(since: float) -> float:
    return round((time.perf_counter() - since) * 1000, 2)
