"""FAISS inner-product index over L2-normalised vectors: exact (flat) for small corpora, HNSW for large."""

from __future__ import annotations

from pathlib import Path

import faiss
import numpy as np

HNSW_M = 32
HNSW_EF_CONSTRUCTION = 80
HNSW_EF_SEARCH = 128
# A filter letting through fewer rows than this share of the index is searched exactly over those rows.
EXACT_FILTER_SHARE = 0.1


def top_k(scores: np.ndarray, k: int) -> np.ndarray:
    """Positions of the `k` highest scores, best first (ties in position order)."""
    top = np.argpartition(-scores, k - 1)[:k] if k < len(scores) else np.arange(len(scores))
    return top[np.argsort(-scores[top], kind="stable")]


class DenseIndex:
    def __init__(self, index: faiss.Index, vectors: np.ndarray) -> None:
        self._index = index
        self.vectors = vectors  # kept for exact search inside a filtered subset
        if isinstance(index, faiss.IndexHNSW):
            index.hnsw.efSearch = HNSW_EF_SEARCH

    @property
    def kind(self) -> str:
        return "hnsw" if isinstance(self._index, faiss.IndexHNSW) else "flat"

    @property
    def size(self) -> int:
        return int(self._index.ntotal)

    @classmethod
    def build(cls, vectors: np.ndarray, hnsw_threshold: int) -> DenseIndex:
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        dim = vectors.shape[1]
        if len(vectors) >= hnsw_threshold:
            index: faiss.Index = faiss.IndexHNSWFlat(dim, HNSW_M, faiss.METRIC_INNER_PRODUCT)
            index.hnsw.efConstruction = HNSW_EF_CONSTRUCTION
        else:
            index = faiss.IndexFlatIP(dim)
        if len(vectors):
            index.add(vectors)
        return cls(index, vectors)

    def save(self, directory: Path) -> None:
        np.save(directory / "vectors.npy", self.vectors)
        if self.kind == "hnsw":
            faiss.write_index(self._index, str(directory / "dense.faiss"))

    @classmethod
    def load(cls, directory: Path) -> DenseIndex:
        vectors = np.load(directory / "vectors.npy", mmap_mode="r")
        graph = directory / "dense.faiss"
        if graph.exists():
            return cls(faiss.read_index(str(graph)), vectors)
        # A flat index is just the matrix: rebuild it rather than store it twice.
        index = faiss.IndexFlatIP(vectors.shape[1])
        if len(vectors):
            index.add(np.ascontiguousarray(vectors))
        return cls(index, vectors)

    def search(self, query: np.ndarray, k: int, allowed: np.ndarray | None = None) -> list[tuple[int, float]]:
        """Top-k (row, score); `allowed` (sorted rows) restricts the search to those rows: exactly over the
        rows when they are few, else inside the index with a selector (no copy of the matrix)."""
        if k <= 0 or self.size == 0:
            return []
        query = np.ascontiguousarray(query, dtype=np.float32).reshape(1, -1)
        params = None
        if allowed is not None:
            if len(allowed) == 0:
                return []
            if len(allowed) < EXACT_FILTER_SHARE * self.size:
                scores = np.asarray(self.vectors[allowed]) @ query[0]
                return [(int(allowed[i]), float(scores[i])) for i in top_k(scores, k)]
            mask = np.zeros(self.size, dtype=bool)
            mask[allowed] = True
            selector = faiss.IDSelectorBitmap(np.packbits(mask, bitorder="little"))
            params = (faiss.SearchParametersHNSW(sel=selector, efSearch=max(HNSW_EF_SEARCH, k))
                      if self.kind == "hnsw" else faiss.SearchParameters(sel=selector))
            k = min(k, len(allowed))
        scores, rows = self._index.search(query, min(k, self.size), params=params)
        return [(int(r), float(s)) for r, s in zip(rows[0], scores[0]) if r >= 0]
