"""Retrieve stage: the passages each query finds — the question's and its rewrite's — within the scope."""

from __future__ import annotations

import time

from rag.answering.context import AnswerContext, ms
from rag.answering.vectors import Vectors
from rag.retrieval import Retriever
from rag.types import Hit


class Retrieve:
    def __init__(self, retriever: Retriever, vectors: Vectors, depth: int) -> None:
        self.retriever = retriever
        self.vectors = vectors
        self.depth = depth  # hits per query

    def run(self, ctx: AnswerContext) -> list[list[Hit]]:
        """One hit list per query, best first (blocking: the embedded model, the index, Redis)."""
        began = time.perf_counter()
        queries = [ctx.question] + ([ctx.rewritten] if ctx.rewritten else [])
        vectors = [self.vectors.query(q, ctx.version) for q in queries]
        ctx.timings["embed"] = ms(began)
        began = time.perf_counter()
        lists = [self.retriever.search(q, top_k=self.depth, query_vector=v, allowed=ctx.scope)
                 for q, v in zip(queries, vectors)]
        ctx.timings["retrieve"] = ms(began)
        return lists
