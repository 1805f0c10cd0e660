"""Extract stage: the answer as quoted, cited sentences of the passages (rag.judging.extractive), when no answer
model is configured or it failed before writing anything."""

from __future__ import annotations

from rag.judging.answer_kind import asks_for_code, giving_first, unstated_kind
from rag.answering.context import AnswerContext
from rag.judging.evidence import Evidence
from rag.judging.extractive import choose_quotes, render_quotes
from rag.judging.gate import GateDecision
from rag.languages import detect_language, passage_language, texts_language
from rag.markers import neutralise
from rag.parts import UNANSWERED, AnsweredPart, quotes_by_part
from rag.prompt import REFUSALS
from rag.judging.quotable import Unit


class Extract:
    def choose(self, ctx: AnswerContext) -> list[list[Unit]]:
        """The excerpts to quote, best first; none when the evidence holds no sentence to quote. Of a question
        that asks more than one thing, each ask the gate finds answered on its own is quoted from its own best
        source, in the order asked (rag.parts), and the asks left unanswered are kept to be named."""
        evidence, decision = ctx.evidence, ctx.decision
        if evidence is None:
            return []
        if any(part.supported for part in evidence.parts):
            def chosen(part: AnsweredPart, sentences: int, chars: int) -> list[list[Unit]]:
                return _chosen(part.part.text, part.evidence, part.decision, sentences, chars)

            quotes, ctx.unanswered = quotes_by_part(evidence.parts, chosen)
            if quotes:
                return quotes
            ctx.unanswered = []
        return _chosen(ctx.question, evidence, decision)

    def confirm(self, ctx: AnswerContext, decision: GateDecision) -> GateDecision:
        """The gate's decision, turned into a refusal when an extractive answer would quote nothing."""
        if decision.answer and not ctx.quotes:
            return GateDecision(False, "the passages hold no sentence to quote", decision.signals)
        if decision.answer and ctx.evidence is not None:
            quoted = [(unit.text, passage_language(ctx.sources[unit.source]))
                      for excerpt in ctx.quotes for unit in excerpt]
            if kind := unstated_kind(ctx.question, detect_language(ctx.question), quoted):
                return GateDecision(False, f"no quoted sentence states a {kind}", decision.signals)
        return decision

    def lines(self, ctx: AnswerContext) -> list[str]:
        """The answer's text, a line each (the refusal when there is nothing to quote)."""
        if not ctx.quotes:
            return [REFUSALS[detect_language(ctx.question)]]
        missing = ctx.evidence.missing if ctx.evidence is not None else ()
        text = render_quotes(ctx.question, ctx.quotes, ctx.sources, missing)
        language = texts_language(detect_language(ctx.question))
        for part in ctx.unanswered:  # the asks no passage answers, named
            text += "\n" + neutralise(UNANSWERED[language].format(part=part.text.rstrip("?？。.!！ ")))
        return text.splitlines(keepends=True)


def _chosen(question: str, evidence: Evidence, decision: GateDecision | None, max_sentences: int = 3,
            max_chars: int = 900) -> list[list[Unit]]:
    """The excerpts answering `question` from `evidence`, as the gate decided on it."""
    if decision is not None and decision.language:
        evidence = evidence.led_by(decision.language)  # what decided is quoted first
    confirmed = decision.confirmed if decision is not None else None
    asked = detect_language(question)
    quotes = choose_quotes(evidence, confirmed=confirmed, asked=asked, code=asks_for_code(question, asked),
                           max_sentences=max_sentences, max_chars=max_chars)
    languages = evidence.languages
    said = {id(scored.unit): scored.said_under for scored in evidence.units}
    return giving_first(question, asked, quotes, lambda unit: unit.text,
                        lambda unit: languages[unit.source] if languages else asked,
                        lambda unit: said.get(id(unit), 0.0) > 0)
