"""Evidence stage: the sentences of the answer's passages scored by meaning against the question
(rag.judging.evidence), for the gate and the extractive answer."""

from __future__ import annotations

import time

import numpy as np

from rag.answering.context import AnswerContext
from rag.answering.vectors import Vectors
from rag.judging.evidence import Evidence, Similarity, TermSimilarity, gather_evidence
from rag.languages import detect_language
from rag.parts import AnsweredPart
from rag.judging.scales import translation_for
from rag.types import Hit

# A part of a question is scored against every unit of the answer's passages: the passages are ranked for the
# whole question, and the unit answering the second ask may sit in the last of them.
EVERY_UNIT = 1 << 16


class GatherEvidence:
    def __init__(self, vectors: Vectors, top_k: int) -> None:
        self.vectors = vectors
        self.top_k = top_k  # passages before the other language's joined ones (rag.pools)

    def run(self, ctx: AnswerContext) -> Evidence:
        """Blocking: the embedded model and its caches."""
        began = time.perf_counter()
        sources = ctx.question_sources
        evidence = gather_evidence(ctx.question, sources, ctx.idf, self.similarity(ctx.question, ctx.version),
                                   query=ctx.rewritten, terms=self.term_similarity(ctx.version),
                                   joined=max(0, len(sources) - self.top_k),
                                   translated=self.translated(ctx.question, ctx.version))
        evidence.parts = self.parts(ctx)
        ctx.took("evidence", began)
        return evidence

    def parts(self, ctx: AnswerContext) -> list[AnsweredPart]:
        """Of a question that asks more than one thing (rag.parts), each ask's own evidence — every unit of
        the answer's passages, with those each ask found, scored against it — and the passages' cosines to it
        (the gate's passage signal, read per part)."""
        if not ctx.parts or not ctx.sources:
            return []
        vectors = np.vstack([ctx.index.vector(c.id) for c in ctx.sources])
        answered = []
        for part in ctx.parts:  # (every passage is one of the ask's own: none is read as a joined one)
            similarity = self.similarity(part.query, ctx.version)
            evidence = gather_evidence(part.query, ctx.sources, ctx.idf, similarity,
                                       terms=self.term_similarity(ctx.version), budget=EVERY_UNIT,
                                       translated=self.translated(part.query, ctx.version))
            cosines = vectors @ self.vectors.query(part.query, ctx.version)
            passages = [Hit(c, float(v), scores={"dense": float(v)}) for c, v in zip(ctx.sources, cosines)]
            answered.append(AnsweredPart(part, evidence, passages))
        return answered

    def similarity(self, question: str, version: str) -> Similarity:
        """Cosine of sentences to the question, with the query vector of the answer's index version."""

        def score(sentences: list[str]) -> list[float]:
            query = self.vectors.query(question, version)
            return [float(v @ query) for v in self.vectors.passages(sentences)]

        return score

    def translated(self, question: str, version: str) -> Similarity | None:
        """Cosine of sentences to the question translated (rag.judging.scales.translation_for), or None."""
        text = translation_for(question, detect_language(question))
        return self.similarity(text, version) if text else None

    def term_similarity(self, version: str) -> TermSimilarity:
        """Cosine of each key term of a question (embedded as a query) to each of the texts (embedded as
        passages, or `as_queries`: a word of the passages to a word of the question)."""

        def score(terms: list[str], texts: list[str], as_queries: bool = False) -> list[list[float]]:
            vectors = (np.vstack(self.vectors.queries(texts, version)) if as_queries
                       else self.vectors.passages(texts))
            return [[float(v) for v in vectors @ self.vectors.query(t, version)] for t in terms]

        return score
