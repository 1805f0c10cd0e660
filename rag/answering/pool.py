"""Pool stage: the passages the answer is made from — the top ones, joined by the other language's best
when the candidates hold both — with the feedback demotions applied to each draw (rag.answering.pools)."""

from __future__ import annotations

import time

import numpy as np

from rag.answering.context import AnswerContext, Candidates
from rag.answering.reorder import ordered_as
from rag.answering.vectors import Vectors
from rag.judging.evidence import GENERAL_QUESTIONS
from rag.answering.pools import draws, joined
from rag.types import Chunk


class Pool:
    def __init__(self, vectors: Vectors, top_k: int) -> None:
        self.vectors = vectors
        self.top_k = top_k

    def run(self, ctx: AnswerContext) -> tuple[Candidates, list[Chunk]]:
        """The candidates as feedback ranks them, and the answer's passages. Blocking: the index's vectors,
        and the embedded model for topic-free questions (cached)."""
        began = time.perf_counter()
        language = ctx.analysed().language
        index = ctx.index

        def general() -> np.ndarray:  # in a language without its own topic-free questions, English's
            questions = GENERAL_QUESTIONS.get(language, GENERAL_QUESTIONS["en"])
            return np.vstack([self.vectors.query(q, ctx.version) for q in questions])

        def vectors(chunks) -> np.ndarray:
            return np.vstack([index.vector(c.id) for c in chunks])

        found = ctx.candidates or Candidates([])
        drawn = draws(language, found.hits, found.ranking_scores, self.top_k, vectors, general)
        pooled = joined(drawn, found.demotions)
        ctx.took("pool", began)
        return ordered_as(found, pooled.draws[0]), pooled.passages
