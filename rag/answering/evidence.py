"""Evidence stage: the sentences of the answer's passages scored by meaning against the question
(rag.judging.evidence), for the gate and the extractive answer."""

from __future__ import annotations

import time

from rag.answering.context import AnswerContext
from rag.answering.vectors import Vectors
from rag.judging.evidence import Evidence, Similarity, TermSimilarity, gather_evidence
from rag.languages import detect_language
from rag.judging.scales import translation_for


class GatherEvidence:
    def __init__(self, vectors: Vectors, top_k: int) -> None:
        self.vectors = vectors
        self.top_k = top_k  # passages before the other language's joined ones (rag.pools)

    def run(self, ctx: AnswerContext) -> Evidence:
        """Blocking: the embedded model and its caches."""
        began = time.perf_counter()
        evidence = gather_evidence(ctx.question, ctx.sources, ctx.idf, self.similarity(ctx.question, ctx.version),
                                   query=ctx.rewritten, terms=self.term_similarity(ctx.version),
                                   joined=max(0, len(ctx.sources) - self.top_k),
                                   translated=self.translated(ctx.question, ctx.version))
        ctx.took("evidence", began)
        return evidence

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
        """Cosine of each key term of a question (embedded as a query) to each of the texts."""

        def score(terms: list[str], texts: list[str]) -> list[list[float]]:
            vectors = self.vectors.passages(texts)
            return [[float(v) for v in vectors @ self.vectors.query(t, version)] for t in terms]

        return score
