"""BM25 over pre-tokenized chunks (bm25s, Lucene scoring)."""

from __future__ import annotations

import logging
from pathlib import Path

import bm25s
import numpy as np

from rag.index.dense import top_k

logging.getLogger("bm25s").setLevel(logging.WARNING)


class LexicalIndex:
    def __init__(self, retriever: bm25s.BM25, size: int) -> None:
        self._retriever = retriever
        self.size = size

    @classmethod
    def build(cls, corpus_tokens: list[list[str]]) -> LexicalIndex:
        retriever = bm25s.BM25(k1=1.2, b=0.75)
        if corpus_tokens:
            retriever.index(corpus_tokens, show_progress=False)
        return cls(retriever, len(corpus_tokens))

    def save(self, directory: Path, name: str = "bm25") -> None:
        if self.size:
            self._retriever.save(str(directory / name), show_progress=False)

    @classmethod
    def load(cls, directory: Path, size: int, name: str = "bm25") -> LexicalIndex:
        if size == 0:
            return cls.build([])
        return cls(bm25s.BM25.load(str(directory / name), show_progress=False), size)

    def idf(self, tokens: list[str]) -> dict[str, float]:
        """Inverse document frequency (BM25 form) of each token; unseen tokens get the maximum."""
        n = max(self.size, 1)
        vocab = self._retriever.vocab_dict if self.size else {}
        indptr = self._retriever.scores["indptr"] if self.size else None
        weights: dict[str, float] = {}
        for token in tokens:
            tid = vocab.get(token) if token else None
            df = int(indptr[tid + 1] - indptr[tid]) if tid is not None and tid + 1 < len(indptr) else 0
            weights[token] = float(np.log(1 + (n - df + 0.5) / (df + 0.5)))
        return weights

    def held_by(self, tokens: list[str], rows: np.ndarray) -> set[str]:
        """Which of `tokens` a row marked in `rows` (a mask over every row) holds."""
        if not self.size:
            return set()
        vocab, indptr, indices = (self._retriever.vocab_dict, self._retriever.scores["indptr"],
                                  self._retriever.scores["indices"])
        held = set()
        for token in tokens:
            tid = vocab.get(token) if token else None
            if tid is not None and tid + 1 < len(indptr) and rows[indices[indptr[tid]:indptr[tid + 1]]].any():
                held.add(token)
        return held

    def scores(self, query_tokens: list[str]) -> np.ndarray | None:
        """BM25 score of every row, or None when no query token is in the vocabulary."""
        known = [t for t in query_tokens if t and t in self._retriever.vocab_dict] if self.size else []
        return self._retriever.get_scores(known) if known else None

    def search(self, query_tokens: list[str], k: int, allowed: np.ndarray | None = None,
               scores: np.ndarray | None = None) -> list[tuple[int, float]]:
        """Top-k (row, score) with a positive score; `allowed` (row ids) restricts the candidates;
        `scores` reuses what `scores()` returned for these tokens."""
        if k <= 0 or self.size == 0:
            return []
        if scores is None:
            scores = self.scores(query_tokens)
        if scores is None:
            return []
        if allowed is not None:
            mask = np.zeros(self.size, dtype=bool)
            mask[allowed] = True
            scores = np.where(mask, scores, 0.0)
        return [(int(i), float(scores[i])) for i in top_k(scores, min(k, self.size)) if scores[i] > 0]
