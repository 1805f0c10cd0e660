"""Feedback reorder stage: passages people flagged as wrong for similar questions move down."""

from __future__ import annotations

from rag.answering.context import AnswerContext, Candidates
from rag.answering.vectors import Vectors
from rag.feedback import FeedbackAdjuster, reorder
from rag.languages import detect_language


class FeedbackReorder:
    def __init__(self, adjuster: FeedbackAdjuster | None, vectors: Vectors) -> None:
        self.adjuster = adjuster
        self.vectors = vectors

    def run(self, ctx: AnswerContext, found: Candidates) -> Candidates:
        """`found` with each demoted passage's score multiplied by its factor, reordered (blocking: the
        feedback store). Applied after the candidate cache, so that votes take effect at once."""
        if self.adjuster is None or not found.hits:
            return found
        vector = self.vectors.query(ctx.question, ctx.version)
        factors = self.adjuster.demotions(vector, detect_language(ctx.question), ctx.scope)
        if not factors:
            return found
        keys = found.rerank_scores if found.rerank_scores is not None else [h.score for h in found.hits]
        order, adjusted = reorder(keys, [h.chunk.id for h in found.hits], factors)
        return Candidates(
            hits=[found.hits[i] for i in order],
            rerank_scores=[adjusted[i] for i in order] if found.rerank_scores is not None else None,
            order=found.order, cached=found.cached,
            demoted=[h.chunk.id for h in found.hits if h.chunk.id in factors],
        )
