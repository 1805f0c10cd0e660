"""Query and passage vectors of the texts an answer compares, cached: the embedded model is the slow part."""

from __future__ import annotations

import threading
from contextlib import suppress

import numpy as np
from cachetools import LRUCache

from cache import Cache, cache_key
from rag.embedding.base import Embedder
from rag.index.work_cache import WorkCache, text_key
from rag.words.jargon import spelled_out
from rag.storage import DiskFull


# Vectors this process used last, in front of the answer cache: an answer asks for its question's vector at
# every stage and for the same key words' and sentences' vectors as the answers before it (384 floats each:
# about 6 MB).
RECENT = 4096


class Vectors:
    """Vectors by embedding model (and, for queries, index version): in the answer cache, the last `RECENT`
    also in this process, and passage vectors also in the knowledge base's work cache when there is one (kept
    across restarts and reindexing, like the passages' own vectors). Blocking (Redis, SQLite, the model): call
    it from the answer's worker."""

    def __init__(self, embedder: Embedder, cache: Cache, ttl: int, work_cache: WorkCache | None = None) -> None:
        self.embedder = embedder
        self.cache = cache
        self.ttl = ttl
        self.work_cache = work_cache
        self._recent: LRUCache[str, bytes] = LRUCache(RECENT)
        self._lock = threading.Lock()

    def _cached(self, namespace: str, keys: list[str]) -> dict[str, bytes | None]:
        """Each of the (distinct) `keys`: from this process's recent vectors, else from the answer cache."""
        with self._lock:
            found = {k: self._recent.get(k) for k in keys}
        asked = [k for k, v in found.items() if v is None]
        if asked:
            fetched = dict(zip(asked, self.cache.get_many(namespace, asked)))
            self._remember({k: v for k, v in fetched.items() if v is not None})
            found |= fetched
        return found

    def _remember(self, vectors: dict[str, bytes]) -> None:
        with self._lock:
            for key, vector in vectors.items():
                self._recent[key] = vector

    def _keep(self, namespace: str, vectors: dict[str, bytes]) -> None:
        """Newly made vectors: in the answer cache (for every replica) and among the recent ones."""
        self._remember(vectors)
        self.cache.set_many(namespace, vectors, self.ttl)

    def query(self, text: str, version: str) -> np.ndarray:
        return self.queries([text], version)[0]

    def queries(self, texts: list[str], version: str) -> list[np.ndarray]:
        """Query vectors of `texts` (shorthand spelled out: rag.words.jargon), those not cached embedded in one call
        of the model."""
        texts = [spelled_out(t) for t in texts]
        keys = [cache_key("query-embedding", version, self.embedder.model_id, t) for t in texts]
        found = self._cached("query-embedding", list(dict.fromkeys(keys)))
        missing = list(dict.fromkeys(t for t, k in zip(texts, keys) if found[k] is None))
        if missing:
            vectors = np.asarray(self.embedder.embed_queries(missing), dtype=np.float32)
            made = {cache_key("query-embedding", version, self.embedder.model_id, text): vector.tobytes()
                    for text, vector in zip(missing, vectors)}
            found |= made
            self._keep("query-embedding", made)
        return [np.frombuffer(found[k], dtype=np.float32) for k in keys]

    def passages(self, texts: list[str]) -> np.ndarray:
        """Passage-form vectors of `texts` (e.g. of sentences to quote), one row each."""
        model = self.embedder.model_id
        keys = [cache_key("passage-embedding", model, t) for t in texts]
        found = self._cached("passage-embedding", list(dict.fromkeys(keys)))
        made: dict[str, bytes] = {}  # vectors the answer cache lacked, kept there
        missing = list(dict.fromkeys(t for t, k in zip(texts, keys) if found[k] is None))
        if missing and self.work_cache is not None:
            stored = self.work_cache.get_vectors(model, [text_key(t) for t in missing])
            for text in missing:
                vector = stored.get(text_key(text))
                if vector is not None:
                    made[cache_key("passage-embedding", model, text)] = vector.tobytes()
            found |= made
            missing = [t for t in missing if found[cache_key("passage-embedding", model, t)] is None]
        if missing:
            vectors = np.asarray(self.embedder.embed_passages(missing), dtype=np.float32)
            embedded = {cache_key("passage-embedding", model, t): v.tobytes() for t, v in zip(missing, vectors)}
            found |= embedded
            made |= embedded
            if self.work_cache is not None:
                with suppress(DiskFull):  # kept in the answer cache only: the answer goes on
                    self.work_cache.put_vectors(model, [text_key(t) for t in missing], vectors)
        if made:
            self._keep("passage-embedding", made)
        return np.vstack([np.frombuffer(found[k], dtype=np.float32) for k in keys])
