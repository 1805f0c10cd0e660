"""Calibrate the evidence gate of the embedded default (no reranker) on real answerable and
unanswerable questions, and report refusal / false-refusal rates on a held-out half.

    .venv/bin/python benchmarks/calibrate_gate.py --data-dir DATA_DIR [--max-false-refusal 0.05]
        [--sets lawref,squad2] [--reuse-signals]

Question sets:
  lawref: refusal.jsonl (unanswerable once the 9 files of refusal-exclude.txt are left out of the index)
          and questions.jsonl whose gold files are all still indexed (answerable);
  squad2: questions.jsonl, answerable and unanswerable.
Signals are computed with the production code: CandidateFinder (retrieval), the gate's passage signals
(best cosine, lexical coverage) and rag.evidence (best sentence cosine, the share of the question's words
in the best sentence, the share of its names and numbers missing from the best passage), with the time
the sentence evidence costs. Questions are split by a hash of their id into a calibration half and a
held-out half. Per language (lawref → zh, squad2 → en) a logistic model over the signals is fitted on the
calibration half, and its threshold set to refuse as many unanswerable questions as possible with at
most the given share of false refusals there; the held-out half reports what that rule does. The same
is done for the previous rule (best passage cosine alone) and each single signal, for comparison, and a
trade-off table gives held-out refusal and false-refusal rates at several thresholds.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ai_employee.wiring import KnowledgeBase  # noqa: E402
from benchmarks.common import DATASETS, save  # noqa: E402
from cache import MemoryCache  # noqa: E402
from rag.candidates import CandidateFinder  # noqa: E402
from rag.config import Settings  # noqa: E402
from rag.evaluation import load_questions  # noqa: E402
from rag.evidence import gather_evidence  # noqa: E402
from rag.gate import GateConfig, lexical_coverage  # noqa: E402
from rag.index.discovery import read_exclude_file  # noqa: E402

SIGNALS = ("dense", "coverage", "sentence", "sentence_coverage", "missing_names")


def signals(kb: KnowledgeBase, questions, top_n: int) -> list[dict]:
    finder = CandidateFinder(kb.retriever, MemoryCache(), None, depth=50)
    snapshot = kb.retriever.snapshot
    rows = []
    for n, q in enumerate(questions, 1):
        found = asyncio.run(finder.find(q.question, None, snapshot.version))
        top = found.hits[:top_n]
        vector = finder.query_vector(q.question, snapshot.version)

        def similarity(texts: list[str]) -> list[float]:
            return [float(v @ vector) for v in finder.passage_vectors(texts)]

        began = time.perf_counter()
        evidence = gather_evidence(q.question, [h.chunk for h in top], snapshot.lexical.idf, similarity)
        took = (time.perf_counter() - began) * 1000
        rows.append({"id": q.id, "answerable": q.answerable,
                     "dense": max((h.scores.get("dense", 0.0) for h in top), default=0.0),
                     "coverage": lexical_coverage(q.question, top, snapshot.lexical.idf),
                     **evidence.signals, "evidence_ms": round(took, 2)})
        if n % 200 == 0:
            print(f"  {n}/{len(questions)}", flush=True)
    return rows


def holdout(question_id: str) -> bool:
    return hashlib.sha256(question_id.encode()).digest()[0] % 2 == 1


def matrix(rows: list[dict], names: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray]:
    return (np.array([[r[n] for n in names] for r in rows], dtype=np.float64),
            np.array([1.0 if r["answerable"] else 0.0 for r in rows]))


def fit_logistic(x: np.ndarray, y: np.ndarray, l2: float = 1e-2, steps: int = 50) -> tuple[np.ndarray, float]:
    """Logistic regression (Newton's method) on standardised signals; weights returned on the raw scale."""
    mean, std = x.mean(0), x.std(0) + 1e-9
    z = np.hstack([(x - mean) / std, np.ones((len(x), 1))])
    w = np.zeros(z.shape[1])
    for _ in range(steps):
        p = 1 / (1 + np.exp(-z @ w))
        gradient = z.T @ (p - y) + l2 * np.r_[w[:-1], 0.0]
        hessian = (z * (p * (1 - p))[:, None]).T @ z + l2 * np.eye(len(w))
        w -= np.linalg.solve(hessian, gradient)
    weights = w[:-1] / std
    return weights, float(w[-1] - (w[:-1] * mean / std).sum())


def threshold_for(scores: np.ndarray, y: np.ndarray, max_false: float) -> float:
    """The highest threshold that refuses at most `max_false` of the answerable questions."""
    answerable = np.sort(scores[y == 1])
    return float(answerable[min(int(max_false * len(answerable)), len(answerable) - 1)])


def rates(scores: np.ndarray, y: np.ndarray, threshold: float) -> dict[str, float]:
    return {"refusal_rate": round(float(np.mean(scores[y == 0] < threshold)), 4),
            "false_refusal_rate": round(float(np.mean(scores[y == 1] < threshold)), 4)}


def auc(scores: np.ndarray, y: np.ndarray) -> float:
    """Chance that an answerable question scores above an unanswerable one (0.5: no separation)."""
    ranks = scores.argsort().argsort() + 1.0
    positives = y == 1
    n_pos, n_neg = positives.sum(), (~positives).sum()
    return round(float((ranks[positives].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg)), 4)


def calibrate(rows: list[dict], names: tuple[str, ...], max_false: float) -> dict:
    calibration = [r for r in rows if not holdout(r["id"])]
    held = [r for r in rows if holdout(r["id"])]
    x_cal, y_cal = matrix(calibration, names)
    x_held, y_held = matrix(held, names)
    weights, bias = fit_logistic(x_cal, y_cal)
    cal_scores, held_scores = x_cal @ weights + bias, x_held @ weights + bias
    threshold = threshold_for(cal_scores, y_cal, max_false)
    tradeoff = []
    for target in (0.01, 0.02, 0.05, 0.1, 0.2):
        cut = threshold_for(cal_scores, y_cal, target)
        tradeoff.append({"calibrated_false_refusal": target, **rates(held_scores, y_held, cut)})
    return {
        "signals": list(names),
        "weights": {n: round(float(w), 6) for n, w in zip(names, weights)},
        "bias": round(bias - threshold, 6),  # folded in: answer when Σ w·x + bias >= 0
        "calibration": rates(cal_scores, y_cal, threshold),
        "holdout": rates(held_scores, y_held, threshold),
        "auc_holdout": auc(held_scores, y_held),
        "tradeoff_holdout": tradeoff,
    }


def load_sets(args, settings: Settings) -> list[tuple[str, KnowledgeBase, list]]:
    wanted = set(args.sets.split(","))
    sets = []
    if "lawref" in wanted:
        lawref = DATASETS / "lawref"
        exclude = read_exclude_file(lawref / "refusal-exclude.txt")
        kb = KnowledgeBase.for_dataset(settings, lawref, exclude)
        kb.refresh([lawref / "docs"], exclude)
        answerable = [q for q in load_questions(lawref / "questions.jsonl")
                      if q.gold and not any(g.file in exclude for g in q.gold)]
        unanswerable = load_questions(lawref / "refusal.jsonl")
        if args.limit:
            answerable, unanswerable = answerable[: args.limit], unanswerable[: args.limit]
        sets.append(("lawref", kb, answerable + unanswerable))
    if "squad2" in wanted:
        squad = DATASETS / "squad2"
        kb_squad = KnowledgeBase.for_dataset(settings, squad, [])
        kb_squad.refresh([squad / "docs"], [])
        questions = load_questions(squad / "questions.jsonl")
        sets.append(("squad2", kb_squad, questions[: args.limit] if args.limit else questions))
    return sets


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--max-false-refusal", type=float, default=0.05)
    parser.add_argument("--limit", type=int, default=0, help="questions per set (0: all)")
    parser.add_argument("--sets", default="lawref,squad2", help="which question sets to use")
    parser.add_argument("--reuse-signals", action="store_true",
                        help="refit on the gate-signals-*.jsonl a previous run left in DATA_DIR")
    args = parser.parse_args()
    settings = Settings(data_dir=args.data_dir, _env_file=None)
    top_n = GateConfig().top_n
    results: dict[str, object] = {"max_false_refusal": args.max_false_refusal, "sets": {}}
    for name, kb, questions in load_sets(args, settings):
        saved = args.data_dir / f"gate-signals-{name}.jsonl"
        if args.reuse_signals and saved.exists():
            rows = [json.loads(line) for line in saved.read_text(encoding="utf-8").splitlines()]
        else:
            print(f"{name}: computing signals for {len(questions)} questions", flush=True)
            rows = signals(kb, questions, top_n)
            saved.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
        report = {
            "language": "zh" if name == "lawref" else "en",
            "answerable": sum(r["answerable"] for r in rows),
            "unanswerable": sum(not r["answerable"] for r in rows),
            "evidence_ms_p50": round(statistics.median(r["evidence_ms"] for r in rows), 2),
            "model": calibrate(rows, SIGNALS, args.max_false_refusal),
            "dense_only": calibrate(rows, ("dense",), args.max_false_refusal),
            "single_signal_auc_holdout": {
                n: calibrate(rows, (n,), args.max_false_refusal)["auc_holdout"] for n in SIGNALS},
        }
        results["sets"][name] = report
        print(name, json.dumps({k: report[k] for k in ("model", "dense_only")}), flush=True)
    save("calibrate_gate", results)


if __name__ == "__main__":
    main()
