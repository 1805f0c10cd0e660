"""Found candidates kept by index version, models and settings: a question asked again skips retrieval and
reranking (never the feedback look-up, so that votes take effect at once)."""

from __future__ import annotations

import json

from cache import Cache, cache_key
from rag.answering.context import AnswerContext, Candidates
from rag.types import Hit, Scope


class CandidateCache:
    """Blocking (Redis): call it from the answer's worker."""

    def __init__(self, cache: Cache, ttl: int, settings: tuple[str, ...]) -> None:
        self.cache = cache
        self.ttl = ttl
        self.settings = settings  # the models and search settings the candidates were found with

    def key(self, ctx: AnswerContext) -> str:
        return cache_key("candidates", ctx.version, *self.settings, ctx.question, ctx.rewritten or "",
                         ctx.scope.key)

    def get(self, ctx: AnswerContext) -> Candidates | None:
        raw = self.cache.get("candidates", self.key(ctx))
        found = _decode(raw, ctx.index.by_id) if raw is not None else None
        if found is None:
            return None
        found.cached = True
        return _within(found, ctx.scope)

    def put(self, ctx: AnswerContext, found: Candidates) -> None:
        self.cache.set("candidates", self.key(ctx), _encode(found), self.ttl)


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


def _decode(raw: bytes, by_id) -> Candidates | None:
    data = json.loads(raw)
    hits = []
    for chunk_id, score, ranks, scores in data["rows"]:
        chunk = by_id.get(chunk_id)
        if chunk is None:
            return None  # written for another snapshot with the same version name: ignore
        hits.append(Hit(chunk, score, ranks, scores))
    return Candidates(hits, data["rerank"], data["order"])
