"""Judge stage: the question analysed once (rag.judging.analysis) and judged on the answer's passages
(rag.judging.judge) — the sentence evidence, the near-miss terms, the gate's decision and, for an extractive
answer, the quotes — written to the answer's context for the stages after it."""

from __future__ import annotations

from rag.answering.context import AnswerContext
from rag.answering.meaning import IndexedMeaning
from rag.answering.vectors import Vectors
from rag.judging.gate import EvidenceGate
from rag.judging.judge import Judge, Judgement, Passages


class JudgeStage:
    def __init__(self, gate: EvidenceGate, vectors: Vectors, top_k: int) -> None:
        self.judge = Judge(gate)
        self.vectors = vectors
        self.top_k = top_k  # passages before the other language's joined ones (rag.answering.pools)

    def run(self, ctx: AnswerContext, extractive: bool) -> Judgement:
        """Blocking: the embedded model and its caches."""
        judgement = self.judge.judge(ctx.analysed(), self.passages(ctx), self.meaning(ctx), extractive=extractive)
        return self._told(ctx, judgement)

    def stand_in(self, ctx: AnswerContext) -> Judgement:
        """The quotes that stand in for a failed answer model (the evidence first, if the gate did not read
        it). Blocking, as `run`."""
        judgement = self.judge.stand_in(ctx.analysed(), self.passages(ctx), self.meaning(ctx), ctx.judgement)
        return self._told(ctx, judgement)

    def meaning(self, ctx: AnswerContext) -> IndexedMeaning:
        return IndexedMeaning(self.vectors, ctx.version, ctx.snapshot)

    def passages(self, ctx: AnswerContext) -> Passages:
        found = ctx.candidates
        return Passages(ctx.sources, ctx.hits, ctx.idf, found.rerank_scores if found is not None else None,
                        ctx.asked_sources, ctx.parts, self.top_k)

    @staticmethod
    def _told(ctx: AnswerContext, judgement: Judgement) -> Judgement:
        """`judgement` written to the context: what the later stages read, and the stages' times."""
        ctx.judgement = judgement
        ctx.timings.update(judgement.timings)
        return judgement
