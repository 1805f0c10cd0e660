"""Gate stage: answer or refuse, judged on the evidence before any answer model is called (rag.judging.gate)."""

from __future__ import annotations

import time
from dataclasses import dataclass

from rag.answering.context import AnswerContext
from rag.judging.gate import EvidenceGate, GateDecision
from rag.languages import detect_language
from rag.refusal import refusal_text, related_documents
from rag.types import Chunk


@dataclass(frozen=True)
class Refusal:
    """What the asker reads when the gate refuses: the refusal, and the documents nearest the question."""

    text: str
    related: list[Chunk]


class Gate:
    def __init__(self, gate: EvidenceGate) -> None:
        self.gate = gate

    def wants_evidence(self, ctx: AnswerContext, extractive: bool) -> bool:
        """Whether the sentence evidence is gathered: an extractive answer quotes it; otherwise only when it
        would change the gate's decision."""
        if not ctx.sources:
            return False
        reranked = ctx.candidates is not None and ctx.candidates.rerank_scores is not None
        return extractive or self.gate.wants_evidence(ctx.query, reranked, ctx.sources)

    def run(self, ctx: AnswerContext) -> GateDecision:
        began = time.perf_counter()
        found = ctx.candidates
        rerank_scores = found.rerank_scores if found is not None else None
        decision = self.gate.decide(ctx.query, ctx.hits, ctx.idf, rerank_scores, ctx.evidence)
        if decision.answer and ctx.evidence is not None:
            for part in ctx.evidence.parts:  # each ask of the question, judged alike on its own evidence
                part.decision = self.gate.decide(part.part.query, part.passages, ctx.idf, None, part.evidence)
        ctx.took("gate", began)
        return decision

    def refusal(self, ctx: AnswerContext) -> Refusal:
        """Blocking: the index's term weights."""
        related = related_documents(ctx.query, ctx.hits, ctx.idf)
        return Refusal(refusal_text(detect_language(ctx.question), related), related)
