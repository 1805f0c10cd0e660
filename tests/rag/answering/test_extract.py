from __future__ import annotations

from rag.judging.gate import GateDecision
from tests.rag.answering.conftest import pooled


def test_the_best_sentences_are_quoted_under_a_header_and_cite_their_passage(handbook):
    pipeline = handbook.pipeline()
    ctx = pooled(pipeline, "How long must a password be?")
    ctx.evidence = pipeline.evidence.run(ctx)
    ctx.quotes = pipeline.extract.choose(ctx)
    lines = pipeline.extract.lines(ctx)
    assert lines[0] == "Quoted passages from the knowledge base that best match your question:\n"
    quote = next(line for line in lines if "14 characters" in line)
    assert quote.startswith("> ") and quote.rstrip().endswith(f"[S{ctx.quotes[0][0].source + 1}]")
    yes = GateDecision(True, "evidence strong enough", {"sentence": 0.9})
    assert pipeline.extract.confirm(ctx, yes) is yes
    ctx.quotes = []
    assert pipeline.extract.confirm(ctx, yes).reason == "the passages hold no sentence to quote"
    assert pipeline.extract.lines(ctx) == ["Sorry, I could not find the answer to this in the knowledge base."]
