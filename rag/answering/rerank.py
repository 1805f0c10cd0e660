"""Rerank stage: the fused hits ordered by the reranker's relevance score (a model call, on the event loop)."""

from __future__ import annotations

import logging
import time

from rag.answering.context import AnswerContext, Candidates
from rag.models.chat import ModelError
from rag.models.rerank import Reranker
from rag.judging.navigation import content_first
from rag.answering.prompt import defang
from rag.types import Hit

_log = logging.getLogger(__name__)


class Rerank:
    def __init__(self, reranker: Reranker | None) -> None:
        self.reranker = reranker

    def wanted(self, hits: list[Hit]) -> bool:
        return self.reranker is not None and bool(hits)

    async def run(self, ctx: AnswerContext, hits: list[Hit]) -> Candidates:
        """`hits` by the reranker's scores, best first (navigation passages after content, rag.judging.navigation); in
        their fused order (and a notice) when it fails."""
        if self.reranker is None or not hits:
            return Candidates(hits)
        began = time.perf_counter()
        try:
            # Document text never steers the reranker either: a passage holding chat-template tokens or the
            # reranker's own <Document> / <Query> marks could answer "yes" for itself
            scores = await self.reranker.scores(defang(ctx.question), [defang(h.chunk.indexed_text) for h in hits])
        except ModelError as exc:
            _log.warning("reranker failed, keeping the fused order: %s", exc)
            ctx.failed("rerank", exc.kind, "The reranker is unavailable; results are in retrieval order.")
            return Candidates(hits)
        finally:
            ctx.took("rerank", began)
        by_score = sorted(range(len(hits)), key=lambda i: -scores[i])
        order = content_first(by_score, lambda i: hits[i].chunk.text)
        return Candidates([hits[i] for i in order], [scores[i] for i in order], f"reranker:{self.reranker.name}")
