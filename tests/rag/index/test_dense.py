"""A filtered dense search returns the exact top k among the allowed rows, whichever way it searches."""

from __future__ import annotations

import numpy as np
import pytest

from rag.index.dense import EXACT_FILTER_SHARE, DenseIndex


@pytest.mark.parametrize("kind", ["flat", "hnsw"])
@pytest.mark.parametrize("share", [EXACT_FILTER_SHARE / 4, 0.5, 0.95])
def test_a_filtered_search_finds_the_exact_top_k_among_the_allowed_rows(kind, share):
    rng = np.random.default_rng(7)
    vectors = rng.normal(size=(4000, 32)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    index = DenseIndex.build(vectors, hnsw_threshold=0 if kind == "hnsw" else 10**9)
    assert index.kind == kind
    allowed = np.flatnonzero(rng.random(len(vectors)) < share)
    for query in rng.normal(size=(5, 32)).astype(np.float32):
        found = index.search(query, 10, allowed)
        exact = allowed[np.argsort(-(vectors[allowed] @ query))[:10]]
        assert [row for row, _ in found] == exact.tolist()
        assert [score for _, score in found] == pytest.approx((vectors[exact] @ query).tolist(), abs=1e-5)


def test_a_filter_letting_nothing_through_finds_nothing_and_k_beyond_the_rows_is_all_of_them():
    vectors = np.eye(8, dtype=np.float32)
    index = DenseIndex.build(vectors, hnsw_threshold=10**9)
    assert index.search(vectors[0], 5, np.array([], dtype=np.int64)) == []
    assert sorted(r for r, _ in index.search(vectors[0], 5, np.array([1, 6]))) == [1, 6]
