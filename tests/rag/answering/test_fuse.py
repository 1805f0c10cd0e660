from __future__ import annotations

from rag.answering.fuse import Fuse
from tests.rag.answering.conftest import opened


def test_a_passage_both_queries_find_leads_and_keeps_its_best_raw_scores(handbook):
    finder = handbook.finder()
    ctx = opened(finder, "How long must a password be?", rewritten="What should I do if I lose my laptop?")
    password, laptop = finder.retrieve.run(ctx)
    fused = Fuse(rrf_k=60, depth=10).run([password, laptop])
    assert len(fused) == 10 and len({h.chunk.id for h in fused}) == 10
    both = {h.chunk.id for h in password[:3]} & {h.chunk.id for h in laptop[:3]}
    leaders = {fused[0].chunk.id, fused[1].chunk.id}
    assert leaders & {password[0].chunk.id, laptop[0].chunk.id} or leaders & both
    first = next(h for h in fused if h.chunk.id == password[0].chunk.id)
    in_laptop = next((h for h in laptop if h.chunk.id == first.chunk.id), None)
    best = max(password[0].scores["dense"], in_laptop.scores["dense"] if in_laptop else -1.0)
    assert first.scores["dense"] == best
    assert Fuse(rrf_k=60, depth=3).run([password]) == password[:3], "one list is its own ranking"
