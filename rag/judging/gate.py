"""Evidence gate: refuse, without calling the answer model, when the best evidence is too weak.

With a reranker the gate reads its relevance score. Without one (the embedded default) it combines
signals of the best candidates: the dense cosine similarity of the best passage, lexical coverage
(the share of the question's IDF weight found in one passage), and — when sentence-level evidence
was gathered (rag.judging.evidence) — how well the best sentence matches, the share of the question's words
that sentence holds, and the share of the question's names and numbers missing from the best passage.
They are combined by a logistic model per question language, since cosine levels of the embedded
model differ by language. Weights and thresholds come from calibration on one half of real answerable
and unanswerable questions (benchmarks/calibrate_gate.py, BENCHMARKS.md).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from rag.judging import calibration
from rag.judging.calibration import AnswerabilityModel, Calibration
from rag.words.languages import detect_language, is_known, passage_language
from rag.words.lexical import tokenize
from rag.judging.scales import comparable, on_passage_scale, scale_of
from rag.types import Chunk, Hit

if TYPE_CHECKING:
    from rag.judging.analysis import QuestionAnalysis
    from rag.judging.evidence import Evidence


# Fitted by benchmarks/calibrate_gate.py and benchmarks/gate_pairs.py; the numbers, and the data each was fitted
# on, are in rag/judging/calibration.json (rag.judging.calibration).
#
# The passage-cosine thresholds of a gate without sentence evidence: the most refusals of unanswerable
# questions with at most 5% false refusals — zh on lawref, en on squad2. Coverage did not add separation there
# (its best weight was 0); it stays a configurable signal.
# Per question language, the answerability model: the signals chosen by cross-validation on one half of lawref
# (zh) and squad2 (en) (the passage cosine alone unless more signals clearly refuse more), weights that keep
# their sign (more similarity can only mean "more answerable"), and the most refusals of unanswerable
# questions with at most 4% false refusals there. Held out: zh refuses 12.3% of the unanswerable questions with
# 2.8% false refusals, en 12.1% with 5.0% (BENCHMARKS.md: what limits it).
# Across languages, (question language, passage language) -> (weight, centre): the passage language's model
# also reads the share of the question's words the best other-language sentence holds translated by the
# bilingual dictionary (evidence signal "translated"); zh -> en only (en -> zh gained nothing).
_CALIBRATION = calibration.default()
COVERAGE_WEIGHT = _CALIBRATION.gate.coverage_weight
THRESHOLD_ZH = _CALIBRATION.gate.threshold_zh
THRESHOLD_EN = _CALIBRATION.gate.threshold_en
MIN_RERANK_SCORE = _CALIBRATION.gate.min_rerank_score
TRANSLATED = dict(_CALIBRATION.gate.translated)
MODELS = dict(_CALIBRATION.gate.models)

SENTENCE_SIGNALS = {"sentence", "sentence_coverage", "missing_names"}  # need rag.judging.evidence


@dataclass(frozen=True)
class GateConfig:
    min_rerank_score: float = MIN_RERANK_SCORE
    # Embedded default: answer when dense_weight * dense + coverage_weight * coverage >= the threshold
    # of the question's language.
    dense_weight: float = 1.0
    coverage_weight: float = COVERAGE_WEIGHT
    threshold_zh: float = THRESHOLD_ZH
    threshold_en: float = THRESHOLD_EN
    top_n: int = 5  # how many candidates the signals look at
    models: dict[str, AnswerabilityModel] = field(default_factory=lambda: dict(MODELS))
    use_evidence: bool = True  # with sentence evidence, decide with `models` instead of the thresholds
    # (question language, passage language) -> (weight, centre) of the translated words' share
    translated: dict[tuple[str, str], tuple[float, float]] = field(default_factory=lambda: dict(TRANSLATED))

    def __post_init__(self) -> None:
        if self.top_n <= 0:
            raise ValueError("top_n must be positive")

    @classmethod
    def from_calibration(cls, fitted: Calibration, **settings) -> GateConfig:
        """The gate of a calibration (rag.judging.calibration); `settings` override its values."""
        gate = fitted.gate
        return cls(**{"min_rerank_score": gate.min_rerank_score, "coverage_weight": gate.coverage_weight,
                      "threshold_zh": gate.threshold_zh, "threshold_en": gate.threshold_en,
                      "models": dict(gate.models), "translated": dict(gate.translated), **settings})

    def threshold(self, question: str) -> float:
        return self.threshold_for(detect_language(question))

    def threshold_for(self, language: str) -> float:
        return self.threshold_zh if language == "zh" else self.threshold_en


@dataclass(frozen=True)
class GateDecision:
    answer: bool
    reason: str
    signals: dict[str, float] = field(default_factory=dict)
    near_miss: tuple[str, ...] = ()  # the question's key terms that no candidate passage mentions
    language: str = ""  # set when the evidence in this language, not the best sentence's, decided
    # When the sentence evidence was read: the other languages whose evidence also passes their own model
    # (the knowledge base answers in each: a China office rule beside the global one)
    confirmed: tuple[str, ...] | None = None


OPPOSITE = "the question asks what is not so; the best sentence says what is"


def lexical_coverage(question: str, hits: list[Hit], idf: Callable[[list[str]], dict[str, float]]) -> float:
    """Best share of the question's IDF mass that a single passage contains (0..1)."""
    return coverage_of(sorted(set(tokenize(question))), hits, idf)


def coverage_of(terms: list[str], hits: list[Hit], idf: Callable[[list[str]], dict[str, float]]) -> float:
    """Best share of the IDF mass of `terms` (a question's distinct tokens, sorted) that a single passage
    contains (0..1)."""
    if not terms or not hits:
        return 0.0
    weights = idf(terms)
    total = sum(weights.values()) or 1.0
    best = 0.0
    for hit in hits:
        present = set(tokenize(hit.chunk.indexed_text))
        best = max(best, sum(w for t, w in weights.items() if t in present) / total)
    return best


def best_dense(language: str, hits: list[Hit], within: str | None = None) -> tuple[float, str, float]:
    """The best passage's cosine put on its own language's scale, that language, and the cosine as it was
    compared with the other passages' (rag.judging.scales.comparable); `within`: the best of that language's
    passages (when there is one)."""
    if within is not None and any(passage_language(h.chunk) == within for h in hits):
        hits = [h for h in hits if passage_language(h.chunk) == within]
    if not hits:
        return 0.0, language, 0.0
    best, best_raw, best_language = -1.0, 0.0, language
    for hit in hits:
        language_of_passage = passage_language(hit.chunk)
        raw = hit.scores.get("dense", 0.0)
        value = comparable(raw, language, language_of_passage, "dense")
        if value > best:
            best, best_raw, best_language = value, raw, language_of_passage
    return on_passage_scale(best_raw, language, best_language, "dense"), best_language, best


class EvidenceGate:
    def __init__(self, config: GateConfig | None = None) -> None:
        self.config = config or GateConfig()

    def _model(self, language: str) -> AnswerabilityModel:
        """The model that reads cosines put on `language`'s scale: English's for a language with none of its
        own (rag.judging.scales.scale_of)."""
        return self.config.models[scale_of(language)]

    def _answerability(self, language: str, scale_language: str, signals: dict[str, float]) -> float:
        """The score of the model of `scale_language` (whose scale the cosines are on), with the translated
        words across languages where that pair reads them."""
        score = self._model(scale_language).score(signals)
        if (language, scale_language) in self.config.translated and "translated" in signals:
            weight, centre = self.config.translated[(language, scale_language)]
            score += weight * (signals["translated"] - centre)
        return score

    def _other_languages(self, language: str, top: list[Hit], coverage: float,
                         evidence: Evidence | None) -> dict[str, dict[str, float]]:
        """The signals of each other language whose evidence passes that language's own model."""
        passing = {}
        for other, said in (evidence.others if evidence is not None else {}).items():
            read = {"dense": round(best_dense(language, top, other)[0], 4), "coverage": coverage, **said}
            score = self._answerability(language, other, read)
            threshold = self._model(other).threshold
            if score >= threshold:
                passing[other] = read | {"answerability": round(score, 4), "threshold": threshold}
        return passing

    def wants_evidence(self, question: str, reranked: bool, passages: list[Chunk] | None = None, *,
                       language: str | None = None) -> bool:
        """Whether sentence-level evidence would change the decision: no reranker score to read, and the
        model of the question's language (`language`, when the caller knows it) — or of a passage's, when
        one is in the other language — uses a sentence signal."""
        if reranked or not self.config.use_evidence:
            return False
        asked = language or detect_language(question)
        # (a question in a language without a model of its own is read by its passages' language's)
        languages = ({asked} if is_known(asked) else set()) | {passage_language(c) for c in passages or []}
        return any(set(self._model(lang).weights) & SENTENCE_SIGNALS
                   for lang in languages if scale_of(lang) in self.config.models)

    def decide(
        self,
        question: str,
        hits: list[Hit],
        idf: Callable[[list[str]], dict[str, float]],
        rerank_scores: list[float] | None = None,
        evidence: Evidence | None = None,
        *,
        analysis: QuestionAnalysis | None = None,
    ) -> GateDecision:
        """Answer or refuse `question` (the query retrieval searched) on its `hits`; `analysis`: that query as
        rag.judging.analysis read it (its language and terms), when the caller has it."""
        cfg = self.config
        if analysis is not None and analysis.query != question:
            raise ValueError("the analysis is of another question")
        if not hits:
            return GateDecision(False, "no passage matched the question")
        top = hits[: cfg.top_n]
        if rerank_scores is not None:
            best = max(rerank_scores[: cfg.top_n], default=0.0)
            signals = {"rerank": best}
            if best < cfg.min_rerank_score:
                return GateDecision(False, f"best reranker score {best:.2f} < {cfg.min_rerank_score:.2f}", signals)
            return GateDecision(True, "reranker found relevant passages", signals)
        language = analysis.query_language if analysis is not None else detect_language(question)
        quoted = evidence.language if evidence is not None and evidence.best is not None else None
        # The model of the language quoted first reads the cosine of that language's best passage.
        dense, scale_language, compared = best_dense(language, top, quoted or None)
        scale_language = quoted or scale_language
        coverage = (coverage_of(list(analysis.query_terms), top, idf) if analysis is not None
                    else lexical_coverage(question, top, idf))
        signals = {"dense": round(dense, 4), "coverage": round(coverage, 4)}
        missing = evidence.missing if evidence is not None else ()
        # Cosines are on the passage language's scale (rag.judging.scales): that language's model reads them.
        model = self._model(scale_language)
        if cfg.use_evidence and (evidence is not None or not set(model.weights) & SENTENCE_SIGNALS):
            signals.update(evidence.signals if evidence is not None else {})
            score = self._answerability(language, scale_language, signals)
            signals |= {"answerability": round(score, 4), "threshold": model.threshold}
            # The knowledge base answers in either language: the other one's evidence, by its own model.
            passing = self._other_languages(language, top, signals["coverage"], evidence)
            if evidence is not None and evidence.opposite and (score >= model.threshold or passing):
                return GateDecision(False, OPPOSITE, signals, missing, confirmed=())
            if score >= model.threshold:
                return GateDecision(True, "evidence strong enough", signals, missing,
                                    confirmed=tuple(passing))
            if passing:  # (of more than one, the one its model finds most answerable)
                other, read = max(passing.items(), key=lambda item: item[1]["answerability"])
                return GateDecision(True, f"evidence strong enough in {other}", read, missing, other,
                                    tuple(passing))
            reason = f"answerability {signals['answerability']:.3f} < {model.threshold:.3f}"
            return GateDecision(False, reason, signals, missing, confirmed=())
        # A threshold set by hand is one number on the question's language's scale: the compared cosine.
        combined = cfg.dense_weight * compared + cfg.coverage_weight * coverage
        threshold = cfg.threshold_for(language)
        signals |= {"combined": round(combined, 4), "threshold": threshold}
        if combined < threshold:
            return GateDecision(False, f"evidence score {combined:.3f} < {threshold:.3f}", signals, missing)
        if evidence is not None and evidence.opposite:  # quoted, the best sentence would answer the opposite
            return GateDecision(False, OPPOSITE, signals, missing)
        return GateDecision(True, "evidence strong enough", signals, missing)
