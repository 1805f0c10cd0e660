"""Retrieve stage: the passages each query finds — the question's and its rewrite's — within the scope."""

from __future__ import annotations

import time

from rag.answering.context import AnswerContext, ms
from rag.answering.vectors import Vectors
from rag.index.retrieval import Retriever
from rag.types import Hit


class Retrieve:
    def __init__(self, retriever: Retriever, vectors: Vectors, depth: int) -> None:
        self.retriever = retriever
        self.vectors = vectors
        self.depth = depth  # hits per query

    def run(self, ctx: AnswerContext) -> list[list[Hit]]:
        """One hit list per query, best first, from the index the answer reads (blocking: the embedded model,
        the index, Redis)."""
        began = time.perf_counter()
        queries = [ctx.question] + ([ctx.rewritten] if ctx.rewritten else [])
        # Each query's own vector, and its translation's where retrieval also reads one: in one model call.
        translations = [self.retriever.translation(q, ctx.index) for q in queries]
        texts = queries + [t for t in translations if t]
        vectors = dict(zip(texts, self.vectors.queries(texts, ctx.version)))
        ctx.timings["embed"] = ms(began)
        began = time.perf_counter()
        lists = [self.retriever.search(q, top_k=self.depth, query_vector=vectors[q], allowed=ctx.scope,
                                       translated_vector=vectors[t] if t else None, index=ctx.index)
                 for q, t in zip(queries, translations)]
        ctx.timings["retrieve"] = ms(began)
        return lists
