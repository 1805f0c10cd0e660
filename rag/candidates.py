"""Candidate passages for a question: retrieval with the original and the rewritten query, fused,
then reranked — cached by index version, models and settings."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from dataclasses import dataclass, field

import numpy as np

from cache import Cache, cache_key
from rag.feedback import FeedbackAdjuster, reorder
from rag.index.work_cache import WorkCache, text_key
from rag.models.chat import ModelError
from rag.models.rerank import Reranker
from rag.prompt import detect_language
from rag.retrieval import Retriever, reciprocal_rank_fusion
from rag.types import EVERYTHING, Hit, Scope

_log = logging.getLogger(__name__)


@dataclass
class Candidates:
    hits: list[Hit]  # best first
    rerank_scores: list[float] | None  # aligned with hits when a reranker scored them
    order: str  # "reranker:<model>" or "fused"
    notices: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)  # "rerank:<kind>" when the reranker failed
    timings_ms: dict[str, float] = field(default_factory=dict)
    cached: bool = False
    demoted: list[str] = field(default_factory=list)  # chunk ids users flagged for similar questions


class CandidateFinder:
    def __init__(
        self,
        retriever: Retriever,
        cache: Cache,
        reranker: Reranker | None = None,
        *,
        depth: int = 50,
        ttl: int = 3600,
        adjuster: FeedbackAdjuster | None = None,
        work_cache: WorkCache | None = None,
    ) -> None:
        if depth <= 0:
            raise ValueError("depth must be positive")
        self.retriever = retriever
        self.cache = cache
        self.reranker = reranker
        self.depth = depth
        self.ttl = ttl
        self.adjuster = adjuster
        self.work_cache = work_cache

    def _settings(self) -> str:
        f = self.retriever.fusion
        # "xl": score fusion aware of passage languages (rag.retrieval), not the cached order of before
        return f"d{self.depth}|{f.method}|k{f.rrf_k}|w{f.dense_weight},{f.bm25_weight}|c{f.candidates}|xl"

    async def find(self, question: str, rewritten: str | None, version: str,
                   scope: Scope = EVERYTHING) -> Candidates:
        found = await self._find(question, rewritten, version, scope)
        return await asyncio.to_thread(self._apply_feedback, found, question, version, scope)

    def _apply_feedback(self, found: Candidates, question: str, version: str, scope: Scope) -> Candidates:
        """Demote chunks voted down for similar questions (after the cache: votes take effect at once)."""
        if self.adjuster is None or not found.hits:
            return found
        factors = self.adjuster.demotions(self.query_vector(question, version), detect_language(question), scope)
        if not factors:
            return found
        keys = found.rerank_scores if found.rerank_scores is not None else [h.score for h in found.hits]
        order, adjusted = reorder(keys, [h.chunk.id for h in found.hits], factors)
        return Candidates(
            hits=[found.hits[i] for i in order],
            rerank_scores=[adjusted[i] for i in order] if found.rerank_scores is not None else None,
            order=found.order, notices=found.notices, failures=found.failures, timings_ms=found.timings_ms,
            cached=found.cached,
            demoted=[h.chunk.id for h in found.hits if h.chunk.id in factors],
        )

    async def _find(self, question: str, rewritten: str | None, version: str, scope: Scope) -> Candidates:
        reranker = self.reranker.name if self.reranker else "none"
        key = cache_key("candidates", version, self.retriever.embedder.model_id, reranker, self._settings(),
                        question, rewritten or "", scope.key)
        cached = await asyncio.to_thread(self.cache.get, "candidates", key)  # Redis: a network round trip
        snapshot = await asyncio.to_thread(lambda: self.retriever.snapshot)
        if cached is not None:
            found = _decode(cached, snapshot.by_id)
            if found is not None:
                found.cached = True
                return _within(found, scope)
        began = time.perf_counter()
        queries = [question] + ([rewritten] if rewritten else [])
        vectors = await asyncio.to_thread(lambda: [self.query_vector(q, version) for q in queries])
        embed_ms = (time.perf_counter() - began) * 1000
        began = time.perf_counter()
        lists = await asyncio.gather(*(
            asyncio.to_thread(self.retriever.search, q, top_k=self.depth, query_vector=v, allowed=scope)
            for q, v in zip(queries, vectors)
        ))
        hits = _fuse(lists, self.retriever.fusion.rrf_k)[: self.depth]
        found = Candidates(hits, None, "fused")
        found.timings_ms = {"embed": round(embed_ms, 2), "retrieve": round((time.perf_counter() - began) * 1000, 2)}
        if self.reranker and hits:
            began = time.perf_counter()
            try:
                scores = await self.reranker.scores(question, [h.chunk.indexed_text for h in hits])
                order = sorted(range(len(hits)), key=lambda i: -scores[i])
                found = Candidates([hits[i] for i in order], [scores[i] for i in order],
                                   f"reranker:{self.reranker.name}", timings_ms=found.timings_ms)
            except ModelError as exc:
                _log.warning("reranker failed, keeping the fused order: %s", exc)
                found.notices.append("The reranker is unavailable; results are in retrieval order.")
                found.failures.append(f"rerank:{exc.kind}")
            found.timings_ms["rerank"] = round((time.perf_counter() - began) * 1000, 2)
        if not found.notices:
            await asyncio.to_thread(self.cache.set, "candidates", key, _encode(found), self.ttl)
        return found

    def passage_vectors(self, texts: list[str]) -> np.ndarray:
        """Passage-form vectors (e.g. of sentences to quote), cached per embedding model: in the answer
        cache, and in the knowledge base's work cache when there is one (kept across restarts and
        reindexing, like the passages' own vectors)."""
        embedder = self.retriever.embedder
        keys = [cache_key("passage-embedding", embedder.model_id, t) for t in texts]
        found = {k: self.cache.get("passage-embedding", k) for k in keys}
        missing = [t for t, k in zip(texts, keys) if found[k] is None]
        if missing and self.work_cache is not None:
            stored = self.work_cache.get_vectors(embedder.model_id, [text_key(t) for t in missing])
            for text in missing:
                vector = stored.get(text_key(text))
                if vector is not None:
                    key = cache_key("passage-embedding", embedder.model_id, text)
                    found[key] = vector.tobytes()
                    self.cache.set("passage-embedding", key, found[key], self.ttl)
            missing = [t for t, k in zip(texts, keys) if found[k] is None]
        if missing:
            missing = list(dict.fromkeys(missing))
            vectors = np.asarray(embedder.embed_passages(missing), dtype=np.float32)
            for text, vector in zip(missing, vectors):
                key = cache_key("passage-embedding", embedder.model_id, text)
                found[key] = vector.tobytes()
                self.cache.set("passage-embedding", key, found[key], self.ttl)
            if self.work_cache is not None:
                self.work_cache.put_vectors(embedder.model_id, [text_key(t) for t in missing], vectors)
        return np.vstack([np.frombuffer(found[k], dtype=np.float32) for k in keys])

    def query_vector(self, text: str, version: str) -> np.ndarray:
        embedder = self.retriever.embedder
        key = cache_key("query-embedding", version, embedder.model_id, text)
        cached = self.cache.get("query-embedding", key)
        if cached is not None:
            return np.frombuffer(cached, dtype=np.float32)
        vector = np.asarray(embedder.embed_query(text), dtype=np.float32)
        self.cache.set("query-embedding", key, vector.tobytes(), self.ttl)
        return vector


def _fuse(lists: list[list[Hit]], k: int) -> list[Hit]:
    """Fuse hit lists from several queries (original + rewritten) by reciprocal rank."""
    if len(lists) == 1:
        return lists[0]
    first_seen: dict[str, Hit] = {}
    position: dict[str, int] = {}
    best_scores: dict[str, dict[str, float]] = {}
    rankings: dict[str, list[tuple[int, float]]] = {}
    for n, hits in enumerate(lists):
        ranking = []
        for hit in hits:
            cid = hit.chunk.id
            if cid not in position:
                position[cid], first_seen[cid], best_scores[cid] = len(position), hit, {}
            for name, value in hit.scores.items():  # the best raw score each retriever gave it
                best_scores[cid][name] = max(best_scores[cid].get(name, value), value)
            ranking.append((position[cid], hit.score))
        rankings[f"query{n}"] = ranking
    ids = list(position)
    return [
        Hit(first_seen[ids[row]].chunk, score, first_seen[ids[row]].ranks, best_scores[ids[row]])
        for row, score, _, _ in reciprocal_rank_fusion(rankings, {}, k)
    ]


def _within(found: Candidates, scope: Scope) -> Candidates:
    """Only the hits `scope` allows: cached hits are decoded against the live index, whose access lists may
    have changed since they were found (a reindex between reading the version and reading the cache)."""
    keep = [i for i, hit in enumerate(found.hits) if scope.allows(hit.chunk)]
    if len(keep) < len(found.hits):
        found.hits = [found.hits[i] for i in keep]
        if found.rerank_scores is not None:
            found.rerank_scores = [found.rerank_scores[i] for i in keep]
    return found


def _encode(found: Candidates) -> bytes:
    rows = [[h.chunk.id, h.score, h.ranks, h.scores] for h in found.hits]
    return json.dumps({"rows": rows, "rerank": found.rerank_scores, "order": found.order}).encode()


def _decode(raw: bytes, by_id: dict) -> Candidates | None:
    data = json.loads(raw)
    hits = []
    for chunk_id, score, ranks, scores in data["rows"]:
        chunk = by_id.get(chunk_id)
        if chunk is None:
            return None  # written for another snapshot with the same version name: ignore
        hits.append(Hit(chunk, score, ranks, scores))
    return Candidates(hits, data["rerank"], data["order"])
