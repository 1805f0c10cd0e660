"""Extract stage: the answer as the quoted, cited sentences the judge chose (rag.judging.judge,
rag.judging.extractive), when no answer model is configured or it failed before writing anything."""

from __future__ import annotations

from rag.answering.context import AnswerContext
from rag.judging.extractive import render_quotes
from rag.words.languages import detect_language, texts_language
from rag.safety.markers import neutralise
from rag.judging.parts import UNANSWERED
from rag.answering.prompt import REFUSALS


class Extract:
    def lines(self, ctx: AnswerContext) -> list[str]:
        """The answer's text, a line each (the refusal when there is nothing to quote). Pure text: runs on the
        event loop."""
        language = ctx.analysis.language if ctx.analysis is not None else detect_language(ctx.question)
        if not ctx.quotes:
            return [REFUSALS[language]]
        missing = ctx.evidence.missing if ctx.evidence is not None else ()
        text = render_quotes(ctx.question, ctx.quotes, ctx.sources, missing)
        frame = texts_language(language)
        for part in ctx.unanswered:  # the asks no passage answers, named
            text += "\n" + neutralise(UNANSWERED[frame].format(part=part.text.rstrip("?？。.!！ ")))
        return text.splitlines(keepends=True)
