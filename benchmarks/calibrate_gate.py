"""Calibrate the evidence gate of the embedded default (no reranker) on real answerable and
unanswerable questions, and report refusal / false-refusal rates on a held-out half.

    .venv/bin/python benchmarks/calibrate_gate.py --data-dir DATA_DIR [--max-false-refusal 0.05]

Question sets:
  lawref: refusal.jsonl (unanswerable once the 9 files of refusal-exclude.txt are left out of the index)
          and questions.jsonl whose gold files are all still indexed (answerable);
  squad2: questions.jsonl, answerable and unanswerable.
Signals are computed with the production code (CandidateFinder + EvidenceGate.lexical_coverage);
the questions are split by a hash of their id into a calibration half and a held-out half.
The rule is `dense + w·coverage >= threshold[language]`. lawref (zh) has unanswerable questions whose
topic is missing from the knowledge base, so it picks w and the zh threshold: the most refusals on its
calibration half with at most the given false-refusal rate. squad2 (en) unanswerable questions are
written to look answerable from a paragraph that is present, which no retrieval signal separates;
it sets the en threshold from its answerable questions alone (the false-refusal budget, with lawref's w).
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ai_employee.wiring import KnowledgeBase  # noqa: E402
from benchmarks.common import DATASETS, save  # noqa: E402
from cache import MemoryCache  # noqa: E402
from rag.candidates import CandidateFinder  # noqa: E402
from rag.config import Settings  # noqa: E402
from rag.evaluation import load_questions  # noqa: E402
from rag.gate import GateConfig, lexical_coverage  # noqa: E402
from rag.index.discovery import read_exclude_file  # noqa: E402


def signals(kb: KnowledgeBase, questions, top_n: int) -> list[dict]:
    finder = CandidateFinder(kb.retriever, MemoryCache(), None, depth=50)
    snapshot = kb.retriever.snapshot
    rows = []
    for n, q in enumerate(questions, 1):
        found = asyncio.run(finder.find(q.question, None, snapshot.version))
        dense = max((h.scores.get("dense", 0.0) for h in found.hits[:top_n]), default=0.0)
        coverage = lexical_coverage(q.question, found.hits[:top_n], snapshot.lexical.idf)
        rows.append({"id": q.id, "answerable": q.answerable, "dense": dense, "coverage": coverage})
        if n % 200 == 0:
            print(f"  {n}/{len(questions)}", flush=True)
    return rows


def holdout(question_id: str) -> bool:
    return hashlib.sha256(question_id.encode()).digest()[0] % 2 == 1


def rates(rows: list[dict], weight: float, threshold: float) -> tuple[float, float]:
    def refused(r: dict) -> bool:
        return r["dense"] + weight * r["coverage"] < threshold

    ans = [r for r in rows if r["answerable"]]
    una = [r for r in rows if not r["answerable"]]
    return (sum(map(refused, una)) / max(len(una), 1), sum(map(refused, ans)) / max(len(ans), 1))


def auc(rows: list[dict], weight: float) -> float:
    """Chance that an answerable question scores above an unanswerable one (0.5: no separation)."""
    ans = [r["dense"] + weight * r["coverage"] for r in rows if r["answerable"]]
    una = [r["dense"] + weight * r["coverage"] for r in rows if not r["answerable"]]
    if not ans or not una:
        return float("nan")
    wins = sum((a > u) + 0.5 * (a == u) for a in ans for u in una)
    return wins / (len(ans) * len(una))


def fit(rows: list[dict], max_false: float, weights: list[float] | None = None) -> dict:
    best = None
    for weight in weights if weights is not None else [w / 20 for w in range(0, 21)]:
        scores = sorted(r["dense"] + weight * r["coverage"] for r in rows if r["answerable"])
        # the largest threshold that keeps false refusals within budget
        cut = int(max_false * len(scores))
        threshold = scores[cut] if cut < len(scores) else scores[-1]
        refusal, false_refusal = rates(rows, weight, threshold)
        if false_refusal <= max_false and (best is None or refusal > best["refusal"]):
            best = {"coverage_weight": weight, "threshold": round(threshold, 4), "refusal": refusal,
                    "false_refusal": false_refusal}
    return best


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
        squad_questions = load_questions(squad / "questions.jsonl")
        sets.append(("squad2", kb_squad, squad_questions[: args.limit] if args.limit else squad_questions))

    fitted: dict[str, list[dict]] = {}
    for name, base, questions in sets:
        saved = args.data_dir / f"gate-signals-{name}.jsonl"
        if args.reuse_signals and saved.exists():
            fitted[name] = [json.loads(line) for line in saved.read_text(encoding="utf-8").splitlines()]
            continue
        print(f"{name}: computing signals for {len(questions)} questions", flush=True)
        fitted[name] = signals(base, questions, top_n)
        saved.write_text("".join(json.dumps(r) + "\n" for r in fitted[name]), encoding="utf-8")

    weight = None
    for name in ("lawref", "squad2"):
        if name not in fitted:
            continue
        rows = fitted[name]
        calibration = [r for r in rows if not holdout(r["id"])]
        held = [r for r in rows if holdout(r["id"])]
        rule = fit(calibration, args.max_false_refusal, weights=None if weight is None else [weight])
        weight = rule["coverage_weight"] if weight is None else weight
        refusal, false_refusal = rates(held, rule["coverage_weight"], rule["threshold"])
        all_refusal, all_false = rates(rows, rule["coverage_weight"], rule["threshold"])
        results["sets"][name] = {
            "language": "zh" if name == "lawref" else "en",
            "answerable": sum(r["answerable"] for r in rows),
            "unanswerable": sum(not r["answerable"] for r in rows),
            "rule": rule,
            "holdout": {"refusal_rate": round(refusal, 4), "false_refusal_rate": round(false_refusal, 4)},
            "all": {"refusal_rate": round(all_refusal, 4), "false_refusal_rate": round(all_false, 4)},
            "auc": round(auc(rows, rule["coverage_weight"]), 4),
        }
        print(name, json.dumps(results["sets"][name]), flush=True)
    save("calibrate_gate", results)


if __name__ == "__main__":
    main()
