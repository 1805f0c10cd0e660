from __future__ import annotations

from rag.feedback import CitedChunk, citation_target
from tests.rag.answering.conftest import opened


def test_a_passage_two_people_flagged_moves_down_for_a_similar_question(handbook, tmp_path):
    finder = handbook.finder(feedback_db=tmp_path / "feedback.sqlite3")
    ctx = opened(finder, "What happens if I lose my laptop?")
    fresh = finder.search(ctx)
    top = fresh.hits[0].chunk
    assert finder.reorder.run(ctx, fresh).hits == fresh.hits, "without votes the order stands"
    store = finder.adjuster.store
    answer = store.record_answer(ctx.question, "…", [CitedChunk(top.id, top.file, "x")], ctx.version, "C1", "U1",
                                 finder.query_vector(ctx.question, ctx.version))
    store.vote(answer, "U2", citation_target(1), -1, "C1")
    similar = opened(finder, "What happens if I lose my laptop?!")
    assert finder.reorder.run(similar, finder.search(similar)).hits[0].chunk == top, "one person's flag alone"
    store.vote(answer, "U3", citation_target(1), -1, "C1")
    moved = finder.reorder.run(similar, finder.search(similar))
    assert moved.hits[0].chunk != top and moved.demoted == [top.id]
    assert top in [h.chunk for h in moved.hits], "demoted, not removed"
