"""Sentence-level evidence for a question: the quotable units of the top passages, scored against it.

Computed once per question on the embedded default and used twice: by the evidence gate (how well the
best sentence matches is a stronger answerability signal than the best passage) and by the extractive
answer (which sentences to quote). Units first need a word in common with the question (IDF-weighted,
so rare, specific words count most); the best of those are then scored by meaning with the embedded
model. Passages in another language than the question are scored by meaning alone.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from rag.lexical import tokenize
from rag.prompt import detect_language
from rag.quotable import Unit, quotable_units
from rag.types import Chunk

Idf = Callable[[list[str]], dict[str, float]]
Similarity = Callable[[list[str]], list[float]]  # cosine of each text to the question

# Weight of the (normalised) lexical score beside the cosine: meaning decides, shared rare words and the
# passage's retrieval rank break near-ties (squad2: 0.885 quotes holding the answer without, 0.905 with).
LEXICAL_WEIGHT = 0.03
_NAME = re.compile(r"(?<!^)(?<![.?!]\s)\b([A-Z][\w'’.-]*|\d[\d,.]*)|(\d[\d,.]*)")


@dataclass
class ScoredUnit:
    unit: Unit
    lexical: float  # IDF mass of the question's words it contains
    coverage: float  # ... as a share of the question's IDF mass
    cosine: float = 0.0
    score: float = 0.0


@dataclass
class Evidence:
    units: list[ScoredUnit]  # the shortlisted units, best first
    all_units: list[Unit] = field(default_factory=list)  # every unit of the passages (for continuations)
    signals: dict[str, float] = field(default_factory=dict)

    @property
    def best(self) -> ScoredUnit | None:
        return self.units[0] if self.units else None


def gather_evidence(
    question: str,
    sources: list[Chunk],
    idf: Idf,
    similarity: Similarity | None = None,
    *,
    query: str | None = None,
    shortlist: int = 10,
) -> Evidence:
    """Score the quotable units of `sources` (best first) against the question (and its rewrite)."""
    terms = set(tokenize(question) + (tokenize(query) if query else []))
    weights = idf(sorted(terms))
    total = sum(weights.values()) or 1.0
    language = detect_language(question)
    units: list[Unit] = []
    for n, chunk in enumerate(sources):
        units.extend(quotable_units(chunk, n, len(units)))

    seen: set[str] = set()
    lexical: list[ScoredUnit] = []
    foreign: list[ScoredUnit] = []
    for unit in units:
        key = " ".join(unit.matched_text.split()).lower()
        if key in seen:  # neighbouring chunks overlap: the same sentence twice is one candidate
            continue
        seen.add(key)
        words = set(tokenize(unit.matched_text))
        mass = sum(w for t, w in weights.items() if t in words)
        prior = 1.0 / (1.0 + 0.35 * unit.source)
        if mass > 0:
            lexical.append(ScoredUnit(unit, mass * prior, mass / total))
        elif similarity is not None and detect_language(sources[unit.source].text) != language:
            foreign.append(ScoredUnit(unit, 0.0, 0.0))
    lexical.sort(key=lambda s: -s.lexical)
    chosen = lexical[:shortlist] + foreign[: max(0, shortlist - len(lexical[:shortlist]))]
    _score(chosen, sources, similarity)
    return Evidence(chosen, units, _signals(question, chosen, sources, weights, total))


def _score(units: list[ScoredUnit], sources: list[Chunk], similarity: Similarity | None) -> None:
    top = max((s.lexical for s in units), default=0.0) or 1.0
    # Embedded with the passage's title and headings, as passages are indexed: "26 working days" under
    # "Annual leave entitlement" is the entitlement, under "Long service days" an extra.
    texts = [f"{sources[s.unit.source].context}\n{s.unit.matched_text}" for s in units]
    cosines = similarity(texts) if similarity and units else [0.0] * len(units)
    for scored, cosine in zip(units, cosines):
        scored.cosine = float(cosine)
        scored.score = scored.cosine + LEXICAL_WEIGHT * scored.lexical / top
    units.sort(key=lambda s: -s.score)


def _signals(question: str, units: list[ScoredUnit], sources: list[Chunk], weights: dict[str, float],
             total: float) -> dict[str, float]:
    """Answerability signals of the sentence level (the passage-level ones are the gate's own)."""
    names = {t for m in _NAME.finditer(question.strip()) for t in tokenize(m.group(0))}
    best_passage = set(tokenize(sources[0].indexed_text)) if sources else set()
    return {
        "sentence": round(max((s.cosine for s in units), default=0.0), 4),
        "sentence_coverage": round(max((s.coverage for s in units), default=0.0), 4),
        "missing_names": round(sum(1 for t in names if t not in best_passage) / len(names), 4) if names else 0.0,
    }
