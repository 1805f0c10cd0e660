from __future__ import annotations

from tests.rag.answering.conftest import pooled


def test_the_best_sentence_of_the_passages_answers_the_question(handbook):
    pipeline = handbook.pipeline()
    ctx = pooled(pipeline, "How long must a password be?")
    evidence = pipeline.evidence.run(ctx)
    assert "14 characters" in evidence.best.unit.text and evidence.signals["sentence"] > 0.8
    assert evidence.missing == () and "evidence" in ctx.timings
    near = pipeline.evidence.run(pooled(pipeline, "Can I bring my dog to the office?"))
    assert "dog" in near.missing, "a key term no passage mentions is a near miss"
