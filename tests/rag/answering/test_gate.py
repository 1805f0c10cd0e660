from __future__ import annotations

from rag.answering.gate import Gate
from tests.rag.answering.conftest import pooled


def judged(pipeline, question: str):
    ctx = pooled(pipeline, question)
    gate: Gate = pipeline._gate
    if gate.wants_evidence(ctx, extractive=True):
        ctx.evidence = pipeline.evidence.run(ctx)
    return ctx, gate.run(ctx)


def test_the_gate_answers_a_handbook_question_and_refuses_another_with_the_nearest_documents(handbook):
    pipeline = handbook.pipeline(gate_threshold=0.9)
    ctx, decision = judged(pipeline, "What is the capital of France?")
    assert not decision.answer and decision.reason.startswith("evidence score") and "gate" in ctx.timings
    refusal = pipeline._gate.refusal(ctx)
    assert refusal.text == "Sorry, I could not find the answer to this in the knowledge base." and refusal.related == []
    permissive = handbook.pipeline(gate_threshold=0.85)
    _, decision = judged(permissive, "How long must a password be?")
    assert decision.answer and decision.signals["combined"] >= 0.85
