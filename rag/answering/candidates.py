"""Candidate passages for a question: the retrieve, fuse and rerank stages and the feedback look-up
(rag.answering) over one index, models and caches — cached by index version, models and settings."""

from __future__ import annotations

import numpy as np

from cache import Cache
from rag.answering.candidate_cache import CandidateCache
from rag.answering.context import AnswerContext, Candidates
from rag.answering.fuse import Fuse
from rag.answering.reorder import FeedbackReorder, feedback_ranked
from rag.answering.rerank import Rerank
from rag.answering.retrieve import Retrieve
from rag.answering.vectors import Vectors
from rag.answering.worker import Worker
from rag.code_version import code_version
from rag.feedback import FeedbackAdjuster
from rag.index.work_cache import WorkCache
from rag.models.rerank import Reranker
from rag.index.retrieval import Retriever
from rag.types import EVERYTHING, Scope

__all__ = ["CandidateFinder", "Candidates"]


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
        self.adjuster = adjuster
        self.vectors = Vectors(retriever.embedder, cache, ttl, work_cache)
        self.retrieve = Retrieve(retriever, self.vectors, depth)
        self.fuse = Fuse(retriever.fusion.rrf_k, depth)
        self.rerank = Rerank(reranker)
        self.reorder = FeedbackReorder(adjuster, self.vectors)
        reranked_by = reranker.name if reranker else "none"
        self.found = CandidateCache(cache, ttl, (retriever.embedder.model_id, reranked_by, self._settings()))

    def _settings(self) -> str:
        f = self.retriever.fusion
        # ... found by this version of the code (rag.code_version): never the candidates another version found
        return (f"d{self.depth}|{f.method}|k{f.rrf_k}|w{f.dense_weight},{f.bm25_weight}|c{f.candidates}"
                f"|{code_version()}")

    async def find(self, question: str, rewritten: str | None, version: str,
                   scope: Scope = EVERYTHING) -> Candidates:
        """The candidates for one question of index `version`, outside an answer (benchmarks, tools),
        ranked as feedback leaves them."""
        ctx = AnswerContext(question, scope=scope, rewritten=rewritten)
        with Worker() as worker:
            await worker.run(self.open, ctx)
            ctx.version = version
            return await worker.run(feedback_ranked, await self.candidates(ctx, worker))

    def open(self, ctx: AnswerContext) -> None:
        """The index the answer reads from here on: loading a newly published one takes a moment (blocking)."""
        snapshot = self.retriever.snapshot
        # What the asker may read decides which words the knowledge base uses (rag.words.lexical.scoped_idf)
        ctx.snapshot, ctx.version, ctx.idf = snapshot, snapshot.version, snapshot.term_weights(ctx.scope)

    async def candidates(self, ctx: AnswerContext, worker: Worker) -> Candidates:
        """Retrieved and fused (or read from the cache), reranked, then told their feedback demotions."""
        found = await worker.run(self.search, ctx)
        if not found.cached and self.rerank.wanted(found.hits):
            found = await self.rerank.run(ctx, found.hits)
        return await worker.run(self.settle, ctx, found)

    def search(self, ctx: AnswerContext) -> Candidates:
        """The cached candidates, else the fused hits of a fresh search (blocking)."""
        return self.found.get(ctx) or Candidates(self.fuse.run(self.retrieve.run(ctx)))

    def settle(self, ctx: AnswerContext, found: Candidates) -> Candidates:
        """Fresh candidates remembered unless the reranker failed on them; then told their feedback demotions,
        which apply where the answer's passages are drawn (blocking)."""
        failed = self.rerank.wanted(found.hits) and found.rerank_scores is None
        if not found.cached and not failed:
            self.found.put(ctx, found)
        return self.reorder.demotions(ctx, found)

    def passage_vectors(self, texts: list[str]) -> np.ndarray:
        return self.vectors.passages(texts)

    def query_vector(self, text: str, version: str) -> np.ndarray:
        return self.vectors.query(text, version)
