"""The one call of the judging package: a question, analysed once (rag.judging.analysis), and its candidate
passages → a `Judgement`: the sentence evidence, the near-miss terms, the gate's decision with its signals,
and — when an extractive answer is wanted — the quotes.

    judge = Judge(EvidenceGate(GateConfig.from_calibration(calibration.default())))
    judgement = judge.judge(analysis, passages, meaning, extractive=True)

`meaning` is the embedded model as judging reads it (`Meaning`: the answering stages bind it to the index
version and its vector caches); `passages` what the answer's stages found (`Passages`). The answer model's
path reads the same decision and near-miss terms (`extractive=False`: no quotes, and the sentence evidence
only when the gate's model reads it).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Protocol

from rag.judging.analysis import QuestionAnalysis, analyse
from rag.judging.answer_kind import asks_for_code, giving_first, unstated_kind
from rag.judging.evidence import Evidence, Similarity, gather_evidence
from rag.judging.extractive import choose_quotes
from rag.judging.gate import EvidenceGate, GateDecision
from rag.judging.near_miss import TermSimilarity
from rag.judging.quotable import Unit
from rag.words.languages import detect_language, passage_language
from rag.words.lexical import Idf
from rag.judging.parts import AnsweredPart, Part, quotes_by_part
from rag.types import Chunk, Hit

# A part of a question is scored against every unit of the answer's passages: the passages are ranked for the
# whole question, and the unit answering the second ask may sit in the last of them.
EVERY_UNIT = 1 << 16
NOTHING_TO_QUOTE = "the passages hold no sentence to quote"


class Meaning(Protocol):
    """The embedded model's cosines, as judging reads them (bound to one index version)."""

    def similarity(self, text: str) -> Similarity:
        """Cosine of sentences to `text` embedded as a question."""

    def translated(self, text: str, language: str) -> Similarity | None:
        """... to `text` translated word for word (rag.judging.scales.translation_for), or None."""

    def terms(self) -> TermSimilarity:
        """Cosine of each key term of a question to each of some texts (rag.judging.near_miss)."""

    def cosines(self, text: str, passages: list[Chunk]) -> list[float]:
        """Cosine of each passage's indexed vector to `text` embedded as a question."""


@dataclass(frozen=True)
class Passages:
    """What the answer's stages found for the question: the passages the answer is made from (`sources`, the
    first `asked` of them found for the whole question, the rest joined for its asks), the candidates ranked
    (`hits`, with a reranker's `rerank_scores`), the asks of a question that asks more than one thing, and the
    index's term weights."""

    sources: list[Chunk]
    hits: list[Hit]
    idf: Idf
    rerank_scores: list[float] | None = None
    asked: int | None = None
    parts: list[Part] = field(default_factory=list)
    top_k: int = 5  # passages before the other language's joined ones (rag.answering.pools)

    @property
    def question_sources(self) -> list[Chunk]:
        return self.sources if self.asked is None else self.sources[: self.asked]


@dataclass(frozen=True)
class Signals:
    """The gate's signals (rag.judging.gate), each None when the decision did not read it. `as_dict()` is the
    dict logs, `Answer.gate` and the benchmarks read."""

    rerank: float | None = None  # the reranker's best score
    dense: float | None = None  # the best passage's cosine, on its language's scale
    coverage: float | None = None  # the best share of the question's IDF mass one passage holds
    sentence: float | None = None  # the best sentence's cosine, on its language's scale
    sentence_coverage: float | None = None
    missing_names: float | None = None  # the share of the question's names the best passage does not hold
    missing_terms: float | None = None  # the IDF share of the near-miss terms
    translated: float | None = None  # the share of the question's words an other-language sentence translates
    answerability: float | None = None  # the answerability model's score ...
    combined: float | None = None  # ... or, without sentence evidence, the weighted passage signals
    threshold: float | None = None  # ... and what it was compared with
    others: Mapping[str, float] = field(default_factory=dict)  # any other signal, by name

    @classmethod
    def from_dict(cls, signals: Mapping[str, float]) -> Signals:
        known = {f.name for f in fields(cls)} - {"others"}
        return cls(**{k: v for k, v in signals.items() if k in known},
                   others={k: v for k, v in signals.items() if k not in known})

    def as_dict(self) -> dict[str, float]:
        named = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "others"}
        return {k: v for k, v in named.items() if v is not None} | dict(self.others)


@dataclass(frozen=True)
class Judgement:
    decision: GateDecision
    evidence: Evidence | None = None  # the sentence evidence, when it was gathered
    quotes: list[list[Unit]] | None = None  # the excerpts an extractive answer quotes, best first
    unanswered: list[Part] = field(default_factory=list)  # the asks of the question no passage answers
    timings: dict[str, float] = field(default_factory=dict)  # milliseconds: "evidence", "gate"

    @property
    def answer(self) -> bool:
        return self.decision.answer

    @property
    def near_miss(self) -> tuple[str, ...]:
        """The question's key terms no candidate passage mentions."""
        return self.decision.near_miss

    @property
    def signals(self) -> Signals:
        return Signals.from_dict(self.decision.signals)


class Judge:
    def __init__(self, gate: EvidenceGate) -> None:
        self.gate = gate

    def judge(self, analysis: QuestionAnalysis, passages: Passages, meaning: Meaning, *,
              extractive: bool) -> Judgement:
        """Answer or refuse, with the evidence when it is read, and the quotes when `extractive`. Blocking:
        the embedded model and its caches."""
        timings: dict[str, float] = {}
        evidence = None
        if self.wants_evidence(analysis, passages, extractive):
            evidence = self.evidence(analysis, passages, meaning, timings)
        began = time.perf_counter()
        decision = self.decide(analysis, passages, evidence)
        timings["gate"] = _ms(began)
        if not (extractive and decision.answer):
            return Judgement(decision, evidence, timings=timings)
        quotes, unanswered = self.quotes(analysis, evidence, decision)
        return Judgement(confirmed(analysis, decision, quotes, evidence, passages.sources), evidence, quotes,
                         unanswered, timings)

    def stand_in(self, analysis: QuestionAnalysis, passages: Passages, meaning: Meaning,
                 judgement: Judgement) -> Judgement:
        """The quotes that stand in for an answer model that failed before writing anything (the evidence
        first, if the gate did not read it); the decision as it was."""
        timings = dict(judgement.timings)
        evidence = judgement.evidence or self.evidence(analysis, passages, meaning, timings)
        quotes, unanswered = self.quotes(analysis, evidence, judgement.decision)
        return replace(judgement, evidence=evidence, quotes=quotes, unanswered=unanswered, timings=timings)

    def wants_evidence(self, analysis: QuestionAnalysis, passages: Passages, extractive: bool) -> bool:
        """Whether the sentence evidence is gathered: an extractive answer quotes it; otherwise only when it
        would change the gate's decision."""
        if not passages.sources:
            return False
        reranked = passages.rerank_scores is not None
        return extractive or self.gate.wants_evidence(analysis.query, reranked, passages.sources,
                                                      language=analysis.query_language)

    def evidence(self, analysis: QuestionAnalysis, passages: Passages, meaning: Meaning,
                 timings: dict[str, float] | None = None) -> Evidence:
        """The sentence evidence of the question's passages, and of each of its asks (rag.judging.parts)."""
        began = time.perf_counter()
        sources = passages.question_sources
        evidence = gather_evidence(analysis.text, sources, passages.idf, meaning.similarity(analysis.text),
                                   query=analysis.rewritten, terms=meaning.terms(),
                                   joined=max(0, len(sources) - passages.top_k),
                                   translated=meaning.translated(analysis.text, analysis.language),
                                   analysis=analysis)
        evidence.parts = self._parts(passages, meaning)
        if timings is not None:
            timings["evidence"] = _ms(began)
        return evidence

    def _parts(self, passages: Passages, meaning: Meaning) -> list[AnsweredPart]:
        """Of a question that asks more than one thing (rag.judging.parts), each ask's own evidence — every unit of
        the answer's passages, with those each ask found, scored against it — and the passages' cosines to it
        (the gate's passage signal, read per part)."""
        if not passages.parts or not passages.sources:
            return []
        answered = []
        for part in passages.parts:  # (every passage is one of the ask's own: none is read as a joined one)
            asked = analyse(part.query, None, passages.idf)
            evidence = gather_evidence(part.query, passages.sources, passages.idf, meaning.similarity(part.query),
                                       terms=meaning.terms(), budget=EVERY_UNIT,
                                       translated=meaning.translated(part.query, asked.language), analysis=asked)
            cosines = meaning.cosines(part.query, passages.sources)
            scored = [Hit(c, float(v), scores={"dense": float(v)}) for c, v in zip(passages.sources, cosines)]
            answered.append(AnsweredPart(part, evidence, scored, analysis=asked))
        return answered

    def decide(self, analysis: QuestionAnalysis, passages: Passages, evidence: Evidence | None) -> GateDecision:
        """The gate's decision on the question; when it answers, each ask's on its own evidence too."""
        decision = self.gate.decide(analysis.query, passages.hits, passages.idf, passages.rerank_scores, evidence,
                                    analysis=analysis)
        if decision.answer and evidence is not None:
            for part in evidence.parts:  # each ask of the question, judged alike on its own evidence
                part.decision = self.gate.decide(part.part.query, part.passages, passages.idf, None, part.evidence,
                                                 analysis=part.analysis)
        return decision

    def quotes(self, analysis: QuestionAnalysis, evidence: Evidence | None,
               decision: GateDecision | None) -> tuple[list[list[Unit]], list[Part]]:
        """The excerpts to quote, best first, and the asks left unanswered; none when the evidence holds no
        sentence to quote. Of a question that asks more than one thing, each ask the gate finds answered on its
        own is quoted from its own best source, in the order asked (rag.judging.parts), and the asks left unanswered
        are named."""
        if evidence is None:
            return [], []
        if any(part.supported for part in evidence.parts):
            def chosen(part: AnsweredPart, sentences: int, chars: int) -> list[list[Unit]]:
                language = detect_language(part.part.text)
                return _chosen(part.part.text, language, asks_for_code(part.part.text, language), part.evidence,
                               part.decision, sentences, chars)

            quotes, unanswered = quotes_by_part(evidence.parts, chosen)
            if quotes:
                return quotes, unanswered
        return _chosen(analysis.text, analysis.language, analysis.wants_code, evidence, decision), []


def confirmed(analysis: QuestionAnalysis, decision: GateDecision, quotes: list[list[Unit]],
              evidence: Evidence | None, sources: list[Chunk]) -> GateDecision:
    """The gate's decision, turned into a refusal when an extractive answer would quote nothing, or nothing
    that states the year or time of day asked (rag.judging.answer_kind.unstated_kind)."""
    if decision.answer and not quotes:
        return GateDecision(False, NOTHING_TO_QUOTE, decision.signals)
    if decision.answer and evidence is not None:
        quoted = [(unit.text, passage_language(sources[unit.source])) for excerpt in quotes for unit in excerpt]
        if kind := unstated_kind(analysis.text, analysis.language, quoted):
            return GateDecision(False, f"no quoted sentence states a {kind}", decision.signals)
    return decision


def _chosen(question: str, asked: str, code: bool, evidence: Evidence, decision: GateDecision | None,
            max_sentences: int = 3, max_chars: int = 900) -> list[list[Unit]]:
    """The excerpts answering `question` (in `asked`; `code`: it asks for code) from `evidence`, as the gate
    decided on it."""
    if decision is not None and decision.language:
        evidence = evidence.led_by(decision.language)  # what decided is quoted first
    confirmed_in = decision.confirmed if decision is not None else None
    quotes = choose_quotes(evidence, confirmed=confirmed_in, asked=asked, code=code,
                           max_sentences=max_sentences, max_chars=max_chars)
    languages = evidence.languages
    said = {id(scored.unit): scored.said_under for scored in evidence.units}
    return giving_first(question, asked, quotes, lambda unit: unit.text,
                        lambda unit: languages[unit.source] if languages else asked,
                        lambda unit: said.get(id(unit), 0.0) > 0)


def _ms(since: float) -> float:
    return round((time.perf_counter() - since) * 1000, 2)

