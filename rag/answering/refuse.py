"""Refuse stage: what the asker reads when the judge refuses (rag.answering.judge) — the refusal in the asker's
language, and the documents nearest the question."""

from __future__ import annotations

from dataclasses import dataclass

from rag.answering.context import AnswerContext
from rag.answering.refusal import refusal_text, related_documents
from rag.types import Chunk


@dataclass(frozen=True)
class Refusal:
    """What the asker reads when the gate refuses: the refusal, and the documents nearest the question."""

    text: str
    related: list[Chunk]


class Refuse:
    def run(self, ctx: AnswerContext) -> Refusal:
        """Blocking: the index's term weights."""
        related = related_documents(ctx.query, ctx.hits, ctx.idf)
        return Refusal(refusal_text(ctx.analysed().language, related), related)
