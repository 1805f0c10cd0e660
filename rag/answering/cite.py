"""Cite stage: markers renumbered and links filtered while the answer streams, then every sentence checked
against the passage it cites (rag.answering.citations) and the links kept to the cited sources (rag.safety.links)."""

from __future__ import annotations

import time
from dataclasses import dataclass

from rag.answering.context import AnswerContext
from rag.answering.vectors import Vectors
from rag.answering.citations import NOT_IN_SOURCES, CitationCheck, MarkerRewriter, finalize
from rag.words.languages import answer_language
from rag.safety.links import LinkFilter, keep_cited, source_urls
from rag.answering.prompt import REFUSALS
from rag.judging.support import SupportScorer
from rag.types import Chunk


class CitedStream:
    """Feed the answer's deltas, get what the asker may read so far (pure: runs on the event loop)."""

    def __init__(self, sources: list[Chunk]) -> None:
        self.markers = MarkerRewriter(len(sources))
        self.links = LinkFilter(source_urls(s.url for s in sources))  # only to the sources' own URLs
        self.parts: list[str] = []

    def feed(self, delta: str) -> str:
        return self._sent(self.markers.feed(self.links.feed(delta)))

    def flush(self) -> str:
        return self._sent(self.markers.feed(self.links.flush()) + self.markers.flush())

    @property
    def text(self) -> str:
        return "".join(self.parts)

    def _sent(self, out: str) -> str:
        if out:
            self.parts.append(out)
        return out


@dataclass(frozen=True)
class Checked:
    """The finished text with its citations checked; `refused` when the model answered with the refusal."""

    check: CitationCheck
    text: str
    refused: bool


class Cite:
    def __init__(self, vectors: Vectors) -> None:
        self.vectors = vectors

    def run(self, ctx: AnswerContext, streamed: CitedStream, generative: bool) -> Checked:
        """Blocking: the embedded model (a sentence against the passages, across languages) and its caches.
        Quotes cite themselves: only a generated answer's sentences are checked."""
        began = time.perf_counter()
        refusal = REFUSALS[ctx.analysed().language]
        text = streamed.text
        note = NOT_IN_SOURCES[answer_language(ctx.question, text)]
        check = finalize(text, ctx.sources, streamed.markers.order, refusal=refusal,
                         scorer=SupportScorer(ctx.idf, self._support_similarity(ctx)),
                         check_sentences=generative, unsupported_note=note)
        ctx.took("citation_check", began)
        shown = keep_cited(check.text, (c.chunk.url for c in check.citations), (s.url for s in ctx.sources))
        return Checked(check, shown, refusal in check.text and not check.citations)

    def _support_similarity(self, ctx: AnswerContext):
        """Cosine of an answer sentence to each passage's indexed vector (used across languages)."""
        index = ctx.index

        def score(sentence: str, passages: list[Chunk]) -> list[float]:
            vector = self.vectors.query(sentence, ctx.version)
            return [float(index.vector(p.id) @ vector) for p in passages]

        return score
