import pytest

from rag.index.retrieval import FusionConfig, reciprocal_rank_fusion, score_fusion


def test_rrf_rewards_agreement_and_keeps_each_retrievers_view():
    fused = reciprocal_rank_fusion(
        {"dense": [(1, 0.9), (2, 0.8), (3, 0.7)], "bm25": [(3, 12.0), (1, 9.0), (4, 5.0)]},
        {"dense": 1.0, "bm25": 1.0},
        k=60,
    )
    order = [row for row, *_ in fused]
    assert order[:2] == [1, 3] and set(order) == {1, 2, 3, 4}
    row, score, ranks, scores = fused[0]
    assert ranks == {"dense": 1, "bm25": 2} and scores == {"dense": 0.9, "bm25": 9.0}
    assert score == pytest.approx(1 / 61 + 1 / 62)


def test_rrf_weights_shift_the_balance():
    rankings = {"dense": [(1, 0.9), (2, 0.1)], "bm25": [(2, 5.0), (1, 1.0)]}
    assert reciprocal_rank_fusion(rankings, {"dense": 1.0, "bm25": 3.0}, k=60)[0][0] == 2
    assert reciprocal_rank_fusion(rankings, {"dense": 3.0, "bm25": 1.0}, k=60)[0][0] == 1


def test_fusion_config_is_checked():
    with pytest.raises(ValueError):
        FusionConfig(rrf_k=0)
    with pytest.raises(ValueError):
        FusionConfig(dense_weight=0, bm25_weight=0)
    with pytest.raises(ValueError):
        FusionConfig(method="borda")


def test_score_fusion_uses_each_retrievers_exact_score_of_every_candidate():
    rankings = {"dense": [(1, 0.90), (2, 0.85)], "bm25": [(3, 9.0), (2, 8.0)]}
    exact = {"dense": {1: 0.90, 2: 0.85, 3: 0.70}, "bm25": {1: 0.0, 2: 8.0, 3: 9.0}}
    fused = score_fusion(rankings, exact, {"dense": 1.0, "bm25": 1.0})
    order = [row for row, *_ in fused]
    assert order[0] == 2, "close second in both beats first in one"
    row, score, ranks, scores = fused[0]
    assert ranks == {"dense": 2, "bm25": 2} and scores == {"dense": 0.85, "bm25": 8.0}
    assert score == pytest.approx(0.5 * (0.85 - 0.70) / 0.20 + 0.5 * 8.0 / 9.0)
    by_row = {row: (ranks, scores) for row, _, ranks, scores in fused}
    assert by_row[3] == ({"bm25": 1}, {"dense": 0.70, "bm25": 9.0}), "bm25-only hit still gets its cosine"
    dense_heavy = score_fusion(rankings, exact, {"dense": 4.0, "bm25": 1.0})
    assert dense_heavy[0][0] == 1


def test_score_fusion_does_not_pull_down_a_passage_bm25_cannot_see():
    # Row 1 is the best dense match but in another language than the question: BM25 scores it 0.
    rankings = {"dense": [(1, 0.90), (2, 0.80)], "bm25": [(2, 9.0), (3, 6.0)]}
    exact = {"dense": {1: 0.90, 2: 0.80, 3: 0.70}, "bm25": {1: 0.0, 2: 9.0, 3: 6.0}}
    weights = {"dense": 0.6, "bm25": 0.4}
    assert [row for row, *_ in score_fusion(rankings, exact, weights)][0] == 2, "the same-language view"
    fused = score_fusion(rankings, exact, weights, foreign={1: 0.0})
    assert [row for row, *_ in fused][0] == 1
    # Its BM25 unseen, taken as the same-language candidates' typical one (rows 2 and 3: 1 and 6/9), not as 0.
    assert fused[0][1] == pytest.approx(0.6 + 0.4 * (1.0 + 6 / 9) / 2)
    assert fused[0][3] == {"dense": 0.90, "bm25": 0.0}
    alone = score_fusion({"dense": [(1, 0.90), (5, 0.80)]}, {"dense": {1: 0.90, 5: 0.80}, "bm25": {}},
                         weights, foreign={1: 0.0, 5: 0.0})
    assert alone[0][1] == pytest.approx(1.0), "every candidate foreign: scored by dense alone, which sees them"


def test_a_passage_bm25_cannot_see_does_not_outrank_one_as_close_that_holds_the_questions_words():
    """A German question in a knowledge base of German, English and Chinese: the German rule (row 2) is as
    close by meaning as the English one (row 1, blind to BM25 on German words) and holds some of the
    question's words; it came second when the English one was scored by dense alone."""
    rankings = {"dense": [(1, 0.90), (2, 0.90), (3, 0.70)], "bm25": [(3, 9.0), (2, 5.0), (4, 0.0)]}
    exact = {"dense": {1: 0.90, 2: 0.90, 3: 0.70, 4: 0.70}, "bm25": {1: 0.0, 2: 5.0, 3: 9.0, 4: 0.0}}
    fused = score_fusion(rankings, exact, {"dense": 0.6, "bm25": 0.4}, foreign={1: 0.0})
    assert [row for row, *_ in fused][:2] == [2, 1]


def test_score_fusion_normalises_cross_language_bm25_among_those_passages():
    # Rows 1 and 4 are foreign; their BM25 (on the question's names and codes) is small next to row 2's.
    rankings = {"dense": [(1, 0.80), (4, 0.80), (2, 0.80)], "bm25": [(2, 9.0), (1, 1.0)]}
    exact = {"dense": {1: 0.80, 2: 0.80, 4: 0.80}, "bm25": {1: 1.0, 2: 9.0, 4: 0.0}}
    fused = dict((row, score) for row, score, *_ in
                 score_fusion(rankings, exact, {"dense": 0.6, "bm25": 0.4}, foreign={1: 1.0, 4: 0.0}))
    assert fused[1] == pytest.approx(fused[2]) and fused[4] < fused[1]
    same = score_fusion(rankings, exact, {"dense": 0.6, "bm25": 0.4}, foreign={})
    assert same == score_fusion(rankings, exact, {"dense": 0.6, "bm25": 0.4})
