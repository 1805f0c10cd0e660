"""Screen a learned correction of hybrid retrieval's score fusion, offline, on the examples of
training/fusion_examples.py: fitted on the training sets, measured on every other set named.

    .venv/bin/python training/screen_fusion.py --work DIR --train xquad,cmrc --measure clef-handbook,...

The fused score as it is (min-max normalised cosine and BM25, 0.6 / 0.4) plus a linear function of what it
does not see — the dense and BM25 ranks, the cosine's gap to the best one, BM25 against its best — fitted by
pairwise logistic regression (each gold candidate against each other one of its question; scikit-learn), the
fused score's weight set to 1. Per measured set: recall@5 and @10 of the gold in the fused order, hand-set
beside learned (before the stages after fusion: named sections, navigation last, the rewrite's list).
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

import numpy as np
from sklearn.linear_model import LogisticRegression

FEATURES = ("fused", "dense_gap", "bm25_share", "dense_rank", "bm25_rank", "in_dense", "in_bm25", "dense_margin",
            "dense", "foreign")
DEPTH = 100  # each retriever's list: a candidate outside one reads as ranked just past it
PAIRS = 60


def features(candidates: list[dict]) -> np.ndarray:
    best_dense = max(c["dense"] for c in candidates)
    best_bm25 = max((c["bm25"] for c in candidates), default=0.0) or 1.0
    second = sorted((c["dense"] for c in candidates), reverse=True)[1:2] or [best_dense]
    rows = []
    for c in candidates:
        rows.append([c["fused"], best_dense - c["dense"], c["bm25"] / best_bm25,
                     math.log(c["dense_rank"] or DEPTH + 1), math.log(c["bm25_rank"] or DEPTH + 1),
                     float(c["dense_rank"] > 0), float(c["bm25_rank"] > 0), best_dense - second[0],
                     c["dense"], float(c["foreign"])])
    return np.array(rows)


def load(work: Path, name: str) -> list[dict]:
    lines = (work / f"{name}-fusion.jsonl").read_text(encoding="utf-8").splitlines()
    return [q for q in map(json.loads, lines) if q["candidates"]]


def fit(questions: list[dict], seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    xs, ys = [], []
    for q in questions:
        x = features(q["candidates"])
        gold = np.array([c["gold"] for c in q["candidates"]])
        grid = [(p, n) for p in np.flatnonzero(gold) for n in np.flatnonzero(~gold)]
        if len(grid) > PAIRS:
            grid = [grid[i] for i in rng.choice(len(grid), PAIRS, replace=False)]
        for k, (p, n) in enumerate(grid):
            sign = 1 if k % 2 == 0 else -1
            xs.append(sign * (x[p] - x[n]))
            ys.append(int(sign > 0))
    coef = LogisticRegression(C=1.0, fit_intercept=False, max_iter=2000).fit(np.array(xs), np.array(ys)).coef_[0]
    return coef / coef[0]


def fit_trees(questions: list[dict]):
    """LightGBM's LambdaRank over the same features: what a linear correction cannot express (a strong dense
    hit trusted only when it stands clear of the next)."""
    import lightgbm
    x = np.vstack([features(q["candidates"]) for q in questions])
    y = np.concatenate([[int(c["gold"]) for c in q["candidates"]] for q in questions])
    ranker = lightgbm.LGBMRanker(n_estimators=150, num_leaves=7, min_child_samples=20, learning_rate=0.05,
                                 verbose=-1)
    ranker.fit(x, y, group=[len(q["candidates"]) for q in questions])
    return ranker


def recall(questions: list[dict], weights) -> dict[str, float]:
    at5 = at10 = 0
    for q in questions:
        x = features(q["candidates"])
        scores = (x[:, 0] if weights is None else x @ weights if isinstance(weights, np.ndarray)
                  else weights.predict(x))
        order = np.argsort(-scores, kind="stable")
        gold = [q["candidates"][i]["gold"] for i in order]
        at5 += any(gold[:5])
        at10 += any(gold[:10])
    n = max(len(questions), 1)
    return {"questions": len(questions), "recall@5": round(at5 / n, 3), "recall@10": round(at10 / n, 3)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--train", required=True)
    parser.add_argument("--measure", required=True)
    parser.add_argument("--model", choices=("linear", "trees"), default="linear")
    args = parser.parse_args()
    train = [q for name in args.train.split(",") for q in load(args.work, name)]
    train = [q for q in train if any(c["gold"] for c in q["candidates"])]
    if args.model == "trees":
        weights = fit_trees(train)
    else:
        weights = fit(train)
        print("weights (fused = 1):", dict(zip(FEATURES, np.round(weights, 4))))
    for name in args.measure.split(","):
        qs = load(args.work, name)
        hand, learned = recall(qs, None), recall(qs, weights)
        print(f"{name:32} {hand['questions']:4}  R@5 {hand['recall@5']:.3f} -> {learned['recall@5']:.3f}   "
              f"R@10 {hand['recall@10']:.3f} -> {learned['recall@10']:.3f}")


if __name__ == "__main__":
    main()
