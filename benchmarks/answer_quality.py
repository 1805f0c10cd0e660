"""Quality of the embedded default's extractive answers on real questions.

    .venv/bin/python benchmarks/answer_quality.py --data-dir DATA_DIR [--sets squad2,lawref] [--limit N]
        [--gate default|off] [--name answer_quality]

squad2: of the answerable questions, the share of answers whose quoted text contains one of the gold
`answers` strings (case and spacing ignored). lawref: the share of answers whose citations include the
gold article (the hit rule of ../shared/datasets/README.md). Also: how many sentences were quoted, how
often the answer was a refusal, and the time to produce it. With `--gate off` every question is answered
(the evidence gate never refuses), which measures the extractive selection alone; `default` runs the
gate as configured, which is what a user gets.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ai_employee.wiring import KnowledgeBase, make_pipeline  # noqa: E402
from benchmarks.common import DATASETS, save  # noqa: E402
from rag.config import Settings  # noqa: E402
from rag.evaluation import Gold, is_hit  # noqa: E402
from rag.text import sentence_spans  # noqa: E402
from rag.types import Answer  # noqa: E402

_SPACE = re.compile(r"\s+")


def squash(text: str) -> str:
    return _SPACE.sub(" ", text).strip().lower()


def quoted_text(answer: Answer) -> str:
    """The quotes of an extractive answer (`> …` lines), without markers."""
    quotes = [line[1:] for line in answer.text.splitlines() if line.startswith(">")]
    return re.sub(r"\[\d+\]", "", " ".join(quotes))


def quoted_sentences(answer: Answer) -> int:
    """Full sentences quoted (a table row counts as one; header and separator lines do not count)."""
    separator = re.compile(r"\|?[\s:|-]+\|?")
    lines = [re.sub(r"\[\d+\]", "", line[1:]).replace(" … ", " ").strip()
             for line in answer.text.splitlines() if line.startswith(">")]
    count = 0
    for n, body in enumerate(lines):
        header = n + 1 < len(lines) and separator.fullmatch(lines[n + 1]) is not None
        if not body or separator.fullmatch(body) or header:
            continue
        count += 1 if body.startswith("|") else len(sentence_spans(body, clauses=False))
    return count


def load_rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


async def answer_all(pipeline, rows: list[dict], judge) -> list[dict]:
    out = []
    for n, row in enumerate(rows, 1):
        began = time.perf_counter()
        final = None
        async for item in pipeline.answer(row["question"]):
            if isinstance(item, Answer):
                final = item
        took = (time.perf_counter() - began) * 1000
        out.append({"id": row["id"], "refused": final.refused, "correct": (not final.refused) and judge(row, final),
                    "sentences": 0 if final.refused else quoted_sentences(final), "ms": round(took, 1)})
        if n % 100 == 0:
            done = sum(r["correct"] for r in out) / len(out)
            print(f"  {n}/{len(rows)} correct so far {done:.3f}", flush=True)
    return out


def squad_judge(row: dict, answer: Answer) -> bool:
    quoted = squash(quoted_text(answer))
    return any(squash(a) in quoted for a in row.get("answers", []) if a.strip())


def lawref_judge(row: dict, answer: Answer) -> bool:
    gold = [Gold(g["file"], g["text"]) for g in row["gold"]]
    return any(is_hit(c.chunk.file, c.chunk.text, g) for c in answer.citations for g in gold)


def summarise(rows: list[dict]) -> dict:
    answered = [r for r in rows if not r["refused"]]
    return {
        "questions": len(rows),
        "correct": round(sum(r["correct"] for r in rows) / max(len(rows), 1), 4),
        "correct_when_answered": round(sum(r["correct"] for r in answered) / max(len(answered), 1), 4),
        "refused": round(1 - len(answered) / max(len(rows), 1), 4),
        "sentences_mean": round(statistics.mean([r["sentences"] for r in answered] or [0]), 3),
        "sentences_max": max([r["sentences"] for r in answered] or [0]),
        "ms_p50": round(statistics.median([r["ms"] for r in rows] or [0]), 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--sets", default="squad2,lawref")
    parser.add_argument("--limit", type=int, default=0)
    parser.add_argument("--gate", choices=("default", "off"), default="off")
    parser.add_argument("--name", default="answer_quality")
    args = parser.parse_args()
    overrides = {"gate_threshold": 0.0} if args.gate == "off" else {}
    settings = Settings(data_dir=args.data_dir, _env_file=None, **overrides)
    results: dict[str, object] = {"gate": args.gate, "sets": {}}
    for name in args.sets.split(","):
        dataset = DATASETS / name
        rows = [r for r in load_rows(dataset / "questions.jsonl") if r.get("answerable", True) and r.get("gold")]
        rows = rows[: args.limit] if args.limit else rows
        kb = KnowledgeBase.for_dataset(settings, dataset, [])
        kb.refresh([dataset / "docs"], [])
        pipeline = make_pipeline(kb)
        print(f"{name}: {len(rows)} answerable questions", flush=True)
        judged = asyncio.run(answer_all(pipeline, rows, squad_judge if name == "squad2" else lawref_judge))
        (args.data_dir / f"{args.name}-{name}.jsonl").write_text(
            "".join(json.dumps(r) + "\n" for r in judged), encoding="utf-8")
        results["sets"][name] = summarise(judged)
        print(name, json.dumps(results["sets"][name]), flush=True)
    save(args.name, results)


if __name__ == "__main__":
    main()
