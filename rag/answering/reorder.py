"""Feedback stage: the passages people flagged as wrong for similar questions, and how much lower each
ranks (rag.feedback). Looked up with the candidates; applied where the answer's passages are drawn
(rag.answering.pools.joined), to every draw, so that none brings a flagged passage back."""

from __future__ import annotations

from dataclasses import replace

from rag.answering.context import AnswerContext, Candidates
from rag.answering.vectors import Vectors
from rag.feedback import FeedbackAdjuster
from rag.words.languages import detect_language
from rag.answering.pools import Draw, joined


class FeedbackReorder:
    def __init__(self, adjuster: FeedbackAdjuster | None, vectors: Vectors) -> None:
        self.adjuster = adjuster
        self.vectors = vectors

    def demotions(self, ctx: AnswerContext, found: Candidates) -> Candidates:
        """`found` told its demotions for the question, where it is asked (blocking: the feedback store).
        Looked up after the candidate cache, so that votes take effect at once."""
        if self.adjuster is None or not found.hits:
            return found
        vector = self.vectors.query(ctx.question, ctx.version)
        demotions = self.adjuster.demotions(vector, detect_language(ctx.question), ctx.scope)
        return replace(found, demotions=demotions)

    def run(self, ctx: AnswerContext, found: Candidates) -> Candidates:
        """`found` with its demotions, ranked as they leave it (blocking)."""
        return feedback_ranked(self.demotions(ctx, found))


def feedback_ranked(found: Candidates) -> Candidates:
    """`found` ranked as its demotions leave it, alone: the candidates outside an answer (benchmarks,
    tools)."""
    alone = Draw(found.hits, found.ranking_scores, len(found.hits))
    return ordered_as(found, joined([alone], found.demotions).draws[0])


def ordered_as(found: Candidates, draw: Draw) -> Candidates:
    """`found` in the order of `draw`, its own hits as feedback ranks them (the reranker's scores lowered with
    them): what the gate and a refusal read."""
    if draw.hits is found.hits:
        return found
    rerank_scores = draw.scores if found.rerank_scores is not None else None
    return replace(found, hits=draw.hits, rerank_scores=rerank_scores)
