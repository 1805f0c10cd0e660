"""Evidence gate: refuse, without calling the answer model, when the best evidence is too weak.

With a reranker the gate reads its relevance score. Without one (the embedded default) it combines
two signals of the best candidates: the dense cosine similarity, and lexical coverage — the share
of the question's IDF weight found in one passage. The thresholds come from calibration on
real answerable and unanswerable questions (benchmarks/calibrate_gate.py, BENCHMARKS.md).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from rag.lexical import tokenize
from rag.types import Hit


@dataclass(frozen=True)
class GateConfig:
    min_rerank_score: float = 0.35
    # Embedded default: answer when dense_weight * dense + coverage_weight * coverage >= threshold.
    dense_weight: float = 1.0
    coverage_weight: float = 0.3
    threshold: float = 1.0
    top_n: int = 5  # how many candidates the signals look at

    def __post_init__(self) -> None:
        if self.top_n <= 0:
            raise ValueError("top_n must be positive")


@dataclass(frozen=True)
class GateDecision:
    answer: bool
    reason: str
    signals: dict[str, float] = field(default_factory=dict)


def lexical_coverage(question: str, hits: list[Hit], idf: Callable[[list[str]], dict[str, float]]) -> float:
    """Best share of the question's IDF mass that a single passage contains (0..1)."""
    terms = sorted(set(tokenize(question)))
    if not terms or not hits:
        return 0.0
    weights = idf(terms)
    total = sum(weights.values()) or 1.0
    best = 0.0
    for hit in hits:
        present = set(tokenize(hit.chunk.indexed_text))
        best = max(best, sum(w for t, w in weights.items() if t in present) / total)
    return best


class EvidenceGate:
    def __init__(self, config: GateConfig | None = None) -> None:
        self.config = config or GateConfig()

    def decide(
        self,
        question: str,
        hits: list[Hit],
        idf: Callable[[list[str]], dict[str, float]],
        rerank_scores: list[float] | None = None,
    ) -> GateDecision:
        cfg = self.config
        if not hits:
            return GateDecision(False, "no passage matched the question")
        top = hits[: cfg.top_n]
        if rerank_scores is not None:
            best = max(rerank_scores[: cfg.top_n], default=0.0)
            signals = {"rerank": best}
            if best < cfg.min_rerank_score:
                return GateDecision(False, f"best reranker score {best:.2f} < {cfg.min_rerank_score:.2f}", signals)
            return GateDecision(True, "reranker found relevant passages", signals)
        dense = max((h.scores.get("dense", 0.0) for h in top), default=0.0)
        coverage = lexical_coverage(question, top, idf)
        combined = cfg.dense_weight * dense + cfg.coverage_weight * coverage
        signals = {"dense": round(dense, 4), "coverage": round(coverage, 4), "combined": round(combined, 4)}
        if combined < cfg.threshold:
            return GateDecision(False, f"evidence score {combined:.3f} < {cfg.threshold:.3f}", signals)
        return GateDecision(True, "evidence strong enough", signals)
