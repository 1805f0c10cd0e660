import pytest

from rag.retrieval import FusionConfig, reciprocal_rank_fusion


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
