from __future__ import annotations

from rag.answering.context import Candidates
from rag.types import Scope
from tests.rag.answering.conftest import opened


def test_found_candidates_come_back_for_the_same_question_and_only_within_the_scope(handbook):
    finder = handbook.finder()
    ctx = opened(finder, "How long must a password be? (cache stage)")
    assert finder.found.get(ctx) is None
    fresh = finder.search(ctx)
    finder.found.put(ctx, Candidates(fresh.hits[:3], [0.9, 0.5, 0.1], "reranker:r"))
    again = finder.found.get(opened(finder, "How long must a password be? (cache stage)"))
    assert again.cached and again.order == "reranker:r" and again.rerank_scores == [0.9, 0.5, 0.1]
    assert [h.chunk.text for h in again.hits] == [h.chunk.text for h in fresh.hits[:3]]
    assert finder.found.get(opened(finder, "How long must a password be?  (another)")) is None
    password = fresh.hits[0].chunk
    only = Scope(frozenset({password.collection}))
    narrow = opened(finder, "How long must a password be? (cache stage)", scope=only)
    finder.found.put(narrow, Candidates(fresh.hits[:3]))
    assert all(only.allows(h.chunk) for h in finder.found.get(narrow).hits)
