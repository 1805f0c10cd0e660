from __future__ import annotations

import asyncio

from rag.judging import analysis as question_analysis
from rag.judging.judge import Signals
from rag.judging.parts import question_parts
from tests.rag.answering.conftest import pooled


def test_the_best_sentence_of_the_passages_answers_the_question(handbook):
    pipeline = handbook.pipeline()
    ctx = pooled(pipeline, "How long must a password be?")
    judgement = pipeline.judging.run(ctx, extractive=True)
    evidence = judgement.evidence
    assert "14 characters" in evidence.best.unit.text and evidence.signals["sentence"] > 0.8
    assert evidence.missing == () and "evidence" in ctx.timings and ctx.evidence is evidence
    near = pipeline.judging.run(pooled(pipeline, "Can I bring my dog to the office?"), extractive=True)
    assert "dog" in near.evidence.missing, "a key term no passage mentions is a near miss"


def judged(pipeline, question: str):
    ctx = pooled(pipeline, question)
    return ctx, pipeline.judging.run(ctx, extractive=True).decision


def test_the_gate_answers_a_handbook_question_and_refuses_another_with_the_nearest_documents(handbook):
    pipeline = handbook.pipeline(gate_threshold=0.9)
    ctx, decision = judged(pipeline, "What is the capital of France?")
    assert not decision.answer and decision.reason.startswith("evidence score") and "gate" in ctx.timings
    refusal = pipeline.refuse.run(ctx)
    assert refusal.text == "Sorry, I could not find the answer to this in the knowledge base." and refusal.related == []
    permissive = handbook.pipeline(gate_threshold=0.85)
    _, decision = judged(permissive, "How long must a password be?")
    assert decision.answer and decision.signals["combined"] >= 0.85


def test_without_quotes_wanted_the_evidence_is_read_only_when_the_gates_model_reads_it(handbook):
    pipeline = handbook.pipeline(gate_threshold=0.85)  # a threshold set by hand: the passage cosine decides
    ctx = pooled(pipeline, "How long must a password be?")
    judgement = pipeline.judging.run(ctx, extractive=False)
    assert judgement.answer and judgement.evidence is None and judgement.quotes is None
    assert "evidence" not in ctx.timings and "gate" in ctx.timings


def answered(pipeline, question: str):
    async def final():
        return [item async for item in pipeline.answer(question)][-1]

    return asyncio.run(final())


def test_the_question_is_analysed_once_per_answer_and_each_ask_once(handbook, monkeypatch):
    analysed = []
    real = question_analysis.analyse

    def counted(question, rewritten, idf):
        analysed.append(question)
        return real(question, rewritten, idf)

    def again(*_args):
        raise AssertionError("the evidence analysed the question again")

    monkeypatch.setattr(question_analysis, "analyse", counted)  # (the answer's context analyses the question)
    monkeypatch.setattr("rag.judging.judge.analyse", counted)  # (the judge each ask)
    monkeypatch.setattr("rag.judging.evidence.analyse", again)
    pipeline = handbook.pipeline()
    question = "How long must a password be?"
    answer = answered(pipeline, question)
    assert not answer.refused and "14 characters" in answer.text
    assert analysed == [question]
    analysed.clear()
    two = "How long must a password be, and how many vacation days do I get?"
    answer = answered(pipeline, two)
    asks = [part.query for part in question_parts(two, "en")]
    assert len(asks) == 2 and analysed == [two, *asks]


def test_the_typed_signals_read_back_as_the_gates_dict_in_its_order(handbook):
    for settings in ({}, {"gate_threshold": 0.85}):  # the answerability model; the passage cosine alone
        pipeline = handbook.pipeline(**settings)
        judgement = pipeline.judging.run(pooled(pipeline, "How long must a password be?"), extractive=True)
        signals = judgement.decision.signals
        assert list(judgement.signals.as_dict().items()) == list(signals.items())
        assert judgement.signals.dense == signals["dense"] and judgement.signals.others == {}
    assert judgement.signals.combined == signals["combined"] and judgement.signals.answerability is None
    assert Signals.from_dict({"dense": 0.9, "novel": 1.0}).as_dict() == {"dense": 0.9, "novel": 1.0}
