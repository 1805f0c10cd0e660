"""Fit a learned unit score (training/unit_features.py) on the examples of training/unit_examples.py, and
measure it against the answer stage's hand-set score.

    .venv/bin/python training/train_unit_score.py --work DIR [--sets xquad,cmrc] [--measure clef-handbook,...]
        [--out FILE] [--json]

A conditional logit: the linear score whose softmax over a question's units puts the most weight on those
holding the answer — the score ranks units within one question, so only differences matter, and a linear
score keeps the cosine's units (its weight is set to 1 by dividing). (Pairwise logistic regression on feature
differences was measured too and did worse than the hand-set score: most pairs are easy ones.) Measured
by cross-validation over articles (no article's units in both the fold trained on and the one measured): of
the questions where some shortlisted unit holds the answer, how often the best-scored one does (first) and one
of the best three does (top3), the learned score beside the hand-set one; then the model fitted on all examples,
on the sets of --measure (never trained on). --out writes the weights, data, folds and figures as JSON.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
from scipy.optimize import minimize
from sklearn.model_selection import GroupKFold

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from training.unit_features import FEATURES  # noqa: E402

FOLDS = 5
# On every weight but the cosine's: the features are on unit scales, and the examples thousands, so it only
# keeps a feature that never varies (a code block, in prose data) at zero
RIDGE = 0.01
START_COSINE = 30.0  # the cosines of one question's units sit within about .1 of one another


def load(work: Path, sets: list[str]) -> list[dict]:
    questions = []
    for name in sets:
        for line in (work / f"{name}-units.jsonl").read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            row["set"] = name
            if any(u["holds"] for u in row["units"]):  # (no unit to find: nothing to learn or measure)
                questions.append(row)
    return questions


def matrix(units: list[dict]) -> np.ndarray:
    return np.array([[u[name] for name in FEATURES] for u in units], dtype=float)


def fit(questions: list[dict]) -> np.ndarray:
    """The weights maximising, over `questions`, the log-likelihood that the units holding the answer take the
    top of a softmax of the scores over the question's units (a conditional logit: what ranks within one
    question, listwise), with a small ridge on every weight but the cosine's (scipy's L-BFGS)."""
    data = [(matrix(q["units"]), np.array([u["holds"] for u in q["units"]])) for q in questions]
    size = len(FEATURES)
    ridge = np.full(size, RIDGE)
    ridge[FEATURES.index("cosine")] = 0.0

    def loss(w: np.ndarray) -> tuple[float, np.ndarray]:
        total, grad = 0.0, np.zeros(size)
        for x, holds in data:
            s = x @ w
            p = np.exp(s - s.max())
            p /= p.sum()
            right = p[holds].sum()
            total -= np.log(right + 1e-12)
            grad += p @ x - (p[holds] @ x[holds]) / (right + 1e-12)
        return total / len(data) + 0.5 * float(ridge @ w**2), grad / len(data) + ridge * w

    start = np.zeros(size)
    start[FEATURES.index("cosine")] = START_COSINE
    return minimize(loss, start, jac=True, method="L-BFGS-B").x


def ranks_right(questions: list[dict], weights: np.ndarray | None) -> dict[str, float]:
    """Of `questions`: the share whose best unit holds the answer, and whose best three hold it (hand-set
    score when `weights` is None)."""
    first = top3 = 0
    for q in questions:
        scores = (np.array([u["score"] for u in q["units"]]) if weights is None
                  else matrix(q["units"]) @ weights)
        order = np.argsort(-scores, kind="stable")
        holds = [q["units"][i]["holds"] for i in order]
        first += holds[0]
        top3 += any(holds[:3])
    n = max(len(questions), 1)
    return {"questions": len(questions), "first": round(first / n, 4), "top3": round(top3 / n, 4)}


def cross_validate(questions: list[dict]) -> dict[str, dict]:
    groups = [f"{q['set']}:{q['article']}" for q in questions]
    measured: dict[str, list[tuple[dict, np.ndarray]]] = {}
    for train, test in GroupKFold(n_splits=FOLDS).split(questions, groups=groups):
        weights = fit([questions[i] for i in train])
        for i in test:
            q = questions[i]
            measured.setdefault(f"{q['set']}-{q['lang']}", []).append((q, weights))
    out = {}
    for key, rows in sorted(measured.items()):
        qs = [q for q, _ in rows]
        learned = {"first": 0.0, "top3": 0.0}
        for q, weights in rows:
            one = ranks_right([q], weights)
            learned["first"] += one["first"] / len(rows)
            learned["top3"] += one["top3"] / len(rows)
        out[key] = {"hand_set": ranks_right(qs, None),
                    "learned": {k: round(v, 4) for k, v in learned.items()}}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--sets", default="xquad,cmrc")
    parser.add_argument("--measure", default="", help="sets measured with the model fitted on --sets")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    sets = args.sets.split(",")
    questions = load(args.work, sets)
    figures = cross_validate(questions)
    coef = fit(questions)
    if coef[FEATURES.index("cosine")] <= 0:
        raise SystemExit("the fitted cosine weight is not positive: the score cannot be put in its units")
    weights = {name: round(float(w / coef[FEATURES.index("cosine")]), 5) for name, w in zip(FEATURES, coef)}
    model = {"weights": weights, "features": list(FEATURES),
             "version": hashlib.sha256(json.dumps(weights, sort_keys=True).encode()).hexdigest()[:12],
             "fitted": datetime.now(timezone.utc).strftime("%Y-%m-%d"), "script": "training/train_unit_score.py",
             "data": {s: sum(q["set"] == s for q in questions) for s in sets},
             "folds": f"{FOLDS}-fold cross-validation over articles", "cross_validated": figures}
    fitted = np.array([weights[name] for name in FEATURES])
    model["measured"] = {}
    for name in filter(None, args.measure.split(",")):
        qs = load(args.work, [name])
        model["measured"][name] = {"hand_set": ranks_right(qs, None), "learned": ranks_right(qs, fitted)}
    if args.out:
        args.out.write_text(json.dumps(model, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    if args.json:
        print(json.dumps(model, ensure_ascii=False, indent=1))
        return
    for key, fig in figures.items():
        hand, learned = fig["hand_set"], fig["learned"]
        print(f"{key:10} {hand['questions']:5} first {hand['first']:.3f} -> {learned['first']:.3f}   "
              f"top3 {hand['top3']:.3f} -> {learned['top3']:.3f}")
    print("weights (cosine = 1):", json.dumps(weights))
    for name, measured in model["measured"].items():
        hand, learned = measured["hand_set"], measured["learned"]
        print(f"{name:32} {hand['questions']:4} first {hand['first']:.3f} -> {learned['first']:.3f}   "
              f"top3 {hand['top3']:.3f} -> {learned['top3']:.3f}")


if __name__ == "__main__":
    main()
