"""The embedder interface shared by the embedded default and remote OpenAI-compatible servers."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np


class EmbeddingError(RuntimeError):
    """The embedder could not produce vectors (server down, bad response, wrong dimension)."""


@runtime_checkable
class Embedder(Protocol):
    """Turns passages and queries into L2-normalised float32 vectors of a fixed dimension."""

    @property
    def model_id(self) -> str:
        """Identity of the model and its query/passage conventions; part of every cache key."""
        ...

    @property
    def dim(self) -> int: ...

    @property
    def batch_size(self) -> int: ...

    def embed_passages(self, texts: list[str]) -> np.ndarray: ...

    def embed_query(self, text: str) -> np.ndarray: ...

    def embed_queries(self, texts: list[str]) -> np.ndarray:
        """Several queries in one call of the model (one row each)."""
        ...


def normalize_rows(vectors: np.ndarray) -> np.ndarray:
    vectors = np.ascontiguousarray(vectors, dtype=np.float32)
    if vectors.ndim == 1:
        vectors = vectors[None, :]
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return vectors / norms
