from __future__ import annotations

from dataclasses import replace

from rag.judging.gate import GateDecision
from rag.judging.judge import NOTHING_TO_QUOTE, confirmed
from tests.rag.answering.conftest import pooled


def test_the_best_sentences_are_quoted_under_a_header_and_cite_their_passage(handbook):
    pipeline = handbook.pipeline()
    ctx = pooled(pipeline, "How long must a password be?")
    pipeline.judging.run(ctx, extractive=True)
    lines = pipeline.extract.lines(ctx)
    assert lines[0] == "Quoted passages from the knowledge base that best match your question:\n"
    quote = next(line for line in lines if "14 characters" in line)
    assert quote.startswith("> ") and quote.rstrip().endswith(f"[S{ctx.quotes[0][0].source + 1}]")
    yes = GateDecision(True, "evidence strong enough", {"sentence": 0.9})
    assert confirmed(ctx.analysis, yes, ctx.quotes, ctx.evidence, ctx.sources) is yes
    assert confirmed(ctx.analysis, yes, [], ctx.evidence, ctx.sources).reason == NOTHING_TO_QUOTE
    ctx.judgement = replace(ctx.judgement, quotes=[])
    assert pipeline.extract.lines(ctx) == ["Sorry, I could not find the answer to this in the knowledge base."]
