"""The embedded model's cosines as the judge reads them (rag.judging.judge.Meaning), bound to the answer's
index version: the query vectors of that version, the sentence vectors and their caches (Vectors)."""

from __future__ import annotations

import numpy as np

from rag.answering.vectors import Vectors
from rag.index.search_index import SearchIndex
from rag.judging.evidence import Similarity, TermSimilarity
from rag.judging.scales import translation_for
from rag.types import Chunk


class IndexedMeaning:
    """Blocking: the embedded model and its caches (call it from the answer's worker)."""

    def __init__(self, vectors: Vectors, version: str, index: SearchIndex | None = None) -> None:
        self.vectors = vectors
        self.version = version
        self.index = index  # the passages' indexed vectors (`cosines`)

    def similarity(self, text: str) -> Similarity:
        """Cosine of sentences to `text`, with the query vector of the answer's index version."""

        def score(sentences: list[str]) -> list[float]:
            query = self.vectors.query(text, self.version)
            return [float(v @ query) for v in self.vectors.passages(sentences)]

        return score

    def translated(self, text: str, language: str) -> Similarity | None:
        """Cosine of sentences to `text` translated (rag.judging.scales.translation_for), or None."""
        translation = translation_for(text, language)
        return self.similarity(translation) if translation else None

    def terms(self) -> TermSimilarity:
        """Cosine of each key term of a question (embedded as a query) to each of the texts (embedded as
        passages, or `as_queries`: a word of the passages to a word of the question)."""

        def score(terms: list[str], texts: list[str], as_queries: bool = False) -> list[list[float]]:
            vectors = (np.vstack(self.vectors.queries(texts, self.version)) if as_queries
                       else self.vectors.passages(texts))
            return [[float(v) for v in vectors @ query] for query in self.vectors.queries(terms, self.version)]

        return score

    def cosines(self, text: str, passages: list[Chunk]) -> list[float]:
        """Cosine of each passage's indexed vector to `text` embedded as a question."""
        if self.index is None:
            raise RuntimeError("no index to read the passages' vectors from")
        vectors = np.vstack([self.index.vector(c.id) for c in passages])
        return [float(v) for v in vectors @ self.vectors.query(text, self.version)]
