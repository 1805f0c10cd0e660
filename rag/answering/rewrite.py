"""Rewrite stage: the question as a standalone search query, with the conversation before it (a model call,
on the event loop), cached by index version."""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, replace

from cache import Cache, cache_key
from rag.answering.context import AnswerContext
from rag.code_version import code_version
from rag.models.chat import ModelError
from rag.answering.rewriter import QueryRewriter

_log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Lookup:
    """A question's rewrite as far as it is known: `settled` once the cache or the model gave it (None: the
    question stands as asked)."""

    key: str
    began: float
    settled: bool
    rewritten: str | None = None


class Rewrite:
    def __init__(self, rewriter: QueryRewriter, cache: Cache, ttl: int) -> None:
        self.rewriter = rewriter
        self.cache = cache
        self.ttl = ttl

    def lookup(self, ctx: AnswerContext) -> Lookup:
        """Blocking (Redis)."""
        began = time.perf_counter()
        turns = "\x1e".join(f"{q}\x1f{a}" for q, a in ctx.history[-3:])
        key = cache_key("rewrite", ctx.version, code_version(), self.rewriter.name, ctx.question, turns)
        cached = self.cache.get("rewrite", key)
        if cached is None:
            return Lookup(key, began, False)
        ctx.took("rewrite", began)
        return Lookup(key, began, True, cached.decode() or None)

    async def run(self, ctx: AnswerContext, lookup: Lookup) -> Lookup:
        """The model's rewrite, settled; unsettled (and a notice) when the rewriter failed."""
        try:
            return replace(lookup, settled=True, rewritten=await self.rewriter.rewrite(ctx.question, ctx.history))
        except ModelError as exc:
            _log.warning("query rewrite failed, searching with the question as asked: %s", exc)
            ctx.failed("rewrite", exc.kind,
                       "The query rewriter is unavailable; searched with the question as asked.")
            ctx.took("rewrite", lookup.began)
            return lookup

    def remember(self, ctx: AnswerContext, lookup: Lookup) -> None:
        """Blocking (Redis)."""
        self.cache.set("rewrite", lookup.key, (lookup.rewritten or "").encode(), self.ttl)
        ctx.took("rewrite", lookup.began)
