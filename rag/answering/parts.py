"""Parts stage: the passages each ask of a question finds, joined to the answer's (rag.judging.parts).

The answer's passages are ranked for the whole question, and the document answering its second ask often
ranks below them ("How many vacation days do I get, and what happens when a holiday falls on a Sunday?": the
holiday list is no top passage). Each ask is searched as a question of its own — the same retrieval, cache,
scope and feedback demotions as the question's — and its best passages join the answer's, after them."""

from __future__ import annotations

import time

from rag.answering.context import AnswerContext
from rag.answering.reorder import feedback_ranked
from rag.judging.parts import question_parts

# Each ask's best passages joined to the answer's: as many as the other language's (rag.answering.pools.OTHER_LANGUAGE)
PART_PASSAGES = 3


class PartPassages:
    def __init__(self, finder, take: int = PART_PASSAGES) -> None:
        self.finder = finder  # rag.answering.candidates.CandidateFinder
        self.take = take

    def run(self, ctx: AnswerContext) -> None:
        """Blocking: the embedded model, the index and the candidate cache. Sets `ctx.parts` and, after the
        answer's passages, those of each ask that are not among them."""
        ctx.parts = question_parts(ctx.question, ctx.analysed().language)
        ctx.asked_sources = len(ctx.sources)
        if not ctx.parts or not ctx.sources:
            return
        began = time.perf_counter()
        have = {c.id for c in ctx.sources}
        joined = []
        for part in ctx.parts:
            asked = AnswerContext(part.query, scope=ctx.scope, snapshot=ctx.snapshot, version=ctx.version,
                                  idf=ctx.idf)
            found = feedback_ranked(self.finder.settle(asked, self.finder.search(asked)))
            for hit in found.hits[: self.take]:
                if hit.chunk.id not in have:
                    have.add(hit.chunk.id)
                    joined.append(hit.chunk)
        ctx.sources = ctx.sources + joined
        ctx.took("parts", began)
