"""Query and passage vectors of the texts an answer compares, cached: the embedded model is the slow part."""

from __future__ import annotations

from contextlib import suppress

import numpy as np

from cache import Cache, cache_key
from rag.embedding.base import Embedder
from rag.index.work_cache import WorkCache, text_key
from rag.jargon import spelled_out
from rag.storage import DiskFull


class Vectors:
    """Vectors by embedding model (and, for queries, index version): in the answer cache, and passage
    vectors also in the knowledge base's work cache when there is one (kept across restarts and reindexing,
    like the passages' own vectors). Blocking (Redis, SQLite, the model): call it from the answer's worker."""

    def __init__(self, embedder: Embedder, cache: Cache, ttl: int, work_cache: WorkCache | None = None) -> None:
        self.embedder = embedder
        self.cache = cache
        self.ttl = ttl
        self.work_cache = work_cache

    def query(self, text: str, version: str) -> np.ndarray:
        return self.queries([text], version)[0]

    def queries(self, texts: list[str], version: str) -> list[np.ndarray]:
        """Query vectors of `texts` (shorthand spelled out: rag.jargon), those not cached embedded in one call
        of the model."""
        texts = [spelled_out(t) for t in texts]
        keys = [cache_key("query-embedding", version, self.embedder.model_id, t) for t in texts]
        found = {k: self.cache.get("query-embedding", k) for k in dict.fromkeys(keys)}
        missing = list(dict.fromkeys(t for t, k in zip(texts, keys) if found[k] is None))
        if missing:
            vectors = np.asarray(self.embedder.embed_queries(missing), dtype=np.float32)
            for text, vector in zip(missing, vectors):
                key = cache_key("query-embedding", version, self.embedder.model_id, text)
                found[key] = vector.tobytes()
                self.cache.set("query-embedding", key, found[key], self.ttl)
        return [np.frombuffer(found[k], dtype=np.float32) for k in keys]

    def passages(self, texts: list[str]) -> np.ndarray:
        """Passage-form vectors of `texts` (e.g. of sentences to quote), one row each."""
        model = self.embedder.model_id
        keys = [cache_key("passage-embedding", model, t) for t in texts]
        found = {k: self.cache.get("passage-embedding", k) for k in keys}
        missing = [t for t, k in zip(texts, keys) if found[k] is None]
        if missing and self.work_cache is not None:
            stored = self.work_cache.get_vectors(model, [text_key(t) for t in missing])
            for text in missing:
                vector = stored.get(text_key(text))
                if vector is not None:
                    self._keep(found, text, vector.tobytes())
            missing = [t for t, k in zip(texts, keys) if found[k] is None]
        if missing:
            missing = list(dict.fromkeys(missing))
            vectors = np.asarray(self.embedder.embed_passages(missing), dtype=np.float32)
            for text, vector in zip(missing, vectors):
                self._keep(found, text, vector.tobytes())
            if self.work_cache is not None:
                with suppress(DiskFull):  # kept in the answer cache only: the answer goes on
                    self.work_cache.put_vectors(model, [text_key(t) for t in missing], vectors)
        return np.vstack([np.frombuffer(found[k], dtype=np.float32) for k in keys])

    def _keep(self, found: dict[str, bytes | None], text: str, vector: bytes) -> None:
        key = cache_key("passage-embedding", self.embedder.model_id, text)
        found[key] = vector
        self.cache.set("passage-embedding", key, vector, self.ttl)
