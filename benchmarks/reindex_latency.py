"""Question latency while a full reindex runs in the same process (as `/reindex` runs inside `serve`), against
the same questions asked while nothing else runs — embedded default, cold embeddings of a lawref slice.

    .venv/bin/python benchmarks/reindex_latency.py [--serve-chars 40000] [--reindex-chars 400000]
        [--idle-questions 30] [--every 1.0] [--baseline] [--out NAME]
    .venv/bin/python benchmarks/reindex_latency.py --whole [--reindex-chars 150000] …

With --whole the questions are answered from all of lawref (19,670 passages, built in about a minute from the
shared precomputed vectors), and the reindex refreshes all of it while embedding --reindex-chars characters of
copies of lawref statutes that are new to the index (their titles changed, so every passage is embedded cold).

Each run starts from an empty data dir (so every embedding of the reindex is computed):
  1. index a first slice of lawref (files in path order, --serve-chars characters): what is answered from;
  2. idle: after 3 warm-up questions, answer --idle-questions lawref questions one after another (extractive
     answers, no answer model);
  3. reindex the first slice plus --reindex-chars characters more in a worker thread — minutes of embedding —
     and meanwhile answer a new question every --every seconds until it ends.
Each question is asked once (the answer cache never hits). --baseline runs the old wiring for comparison: the
indexer shares the questions' embedder (one lock) at normal priority. The slices are copied to a temporary
folder, never into the project. Results: benchmarks/results/reindex_latency[_baseline].json, with the load
average, which matters on a shared machine.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rag.knowledge_base import KnowledgeBase, make_pipeline  # noqa: E402
from benchmarks.common import DATASETS, percentiles, save  # noqa: E402
from rag.config import Settings  # noqa: E402
from rag.types import Answer  # noqa: E402

LAWREF = DATASETS / "lawref"
WARM_UP = 3  # questions not measured


def slices(serve_chars: int, reindex_chars: int) -> tuple[list[Path], list[Path]]:
    """Lawref files in path order: the first `serve_chars` characters, then `reindex_chars` more."""
    first: list[Path] = []
    more: list[Path] = []
    total = 0
    for path in sorted((LAWREF / "docs").rglob("*.md")):
        if total >= serve_chars + reindex_chars:
            break
        (first if total < serve_chars else more).append(path)
        total += len(path.read_text(encoding="utf-8"))
    return first, more


def cold_copies(reindex_chars: int, docs: Path) -> None:
    """Copies of the last lawref statutes (path order), `reindex_chars` characters, titled anew: new to the index."""
    total = 0
    for n, path in enumerate(sorted((LAWREF / "docs").rglob("*.md"), reverse=True)):
        if total >= reindex_chars:
            break
        text = path.read_text(encoding="utf-8")
        target = docs / "修订稿" / f"{n:04d}-{path.name}"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(f"# 修订稿 {n}：" + text.lstrip("# "), encoding="utf-8")
        total += len(text)


def copy(files: list[Path], docs: Path) -> None:
    for path in files:
        target = docs / path.relative_to(LAWREF / "docs")
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)


async def ask(pipeline, question: str) -> float:
    began = time.perf_counter()
    async for item in pipeline.answer(question):
        if isinstance(item, Answer):
            return (time.perf_counter() - began) * 1000
    raise RuntimeError("the pipeline gave no answer")


async def measure(kb: KnowledgeBase, pipeline, questions: list[str], idle_count: int, every: float,
                  docs: Path) -> dict[str, object]:
    for question in questions[:WARM_UP]:  # the first questions load the index, the tokenizer's dictionary…
        await ask(pipeline, question)
    questions = questions[WARM_UP:]
    idle = [await ask(pipeline, q) for q in questions[:idle_count]]
    load_before = os.getloadavg()
    began = time.perf_counter()
    reindex = asyncio.create_task(asyncio.to_thread(kb.refresh, [docs]))
    during: list[float] = []
    waiting = iter(questions[idle_count:])
    while not reindex.done():
        asked = time.perf_counter()
        question = next(waiting, None)
        if question is None:
            raise RuntimeError("ran out of questions: ask less often (--every) or reindex less")
        during.append(await ask(pipeline, question))
        await asyncio.wait({reindex}, timeout=max(0.0, every - (time.perf_counter() - asked)))
    report = reindex.result()
    return {
        "idle": percentiles(idle),
        "during_reindex": percentiles(during),
        "p50_ratio": round(percentiles(during)["p50_ms"] / percentiles(idle)["p50_ms"], 2),
        "p95_ratio": round(percentiles(during)["p95_ms"] / percentiles(idle)["p95_ms"], 2),
        "reindex": {"seconds": round(time.perf_counter() - began, 1), "files": report.files, "chunks": report.chunks,
                    "embedded": report.embedded, "embed_busy": round(report.embed_busy, 3)},
        "load_avg_before_reindex": [round(v, 2) for v in load_before],
        "load_avg_after_reindex": [round(v, 2) for v in os.getloadavg()],
    }


def old_wiring(kb: KnowledgeBase) -> None:
    """Before issue 17 item 12: one embedder (and its lock) for questions and indexing, at normal priority."""
    import rag.index.embed_worker as embed_worker

    kb.__dict__["index_embedder"] = kb.embedder
    embed_worker.lower_priority = lambda: None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--serve-chars", type=int, default=40_000)
    parser.add_argument("--reindex-chars", type=int, default=400_000)
    parser.add_argument("--idle-questions", type=int, default=30)
    parser.add_argument("--every", type=float, default=1.0, help="seconds between questions during the reindex")
    parser.add_argument("--baseline", action="store_true")
    parser.add_argument("--whole", action="store_true", help="answer from all of lawref (seeded vectors)")
    parser.add_argument("--out", default=None, help="result name (default reindex_latency[_baseline])")
    args = parser.parse_args()
    rows = [json.loads(line) for line in open(LAWREF / "questions.jsonl", encoding="utf-8")]
    questions = list(dict.fromkeys(r["question"] for r in rows))
    first, more = ((sorted((LAWREF / "docs").rglob("*.md")), []) if args.whole
                   else slices(args.serve_chars, args.reindex_chars))
    with tempfile.TemporaryDirectory(prefix="reindex-latency-") as tmp:
        docs = Path(tmp) / "docs"
        copy(first, docs)
        if args.whole:  # the served index's vectors are the shared precomputed ones (a copy: never the original)
            (Path(tmp) / "data").mkdir()
            shutil.copyfile(LAWREF / "embeddings" / "cache.sqlite3", Path(tmp) / "data" / "cache.sqlite3")
        kb = KnowledgeBase(Settings(data_dir=Path(tmp) / "data", _env_file=None), Path(tmp) / "index")
        if args.baseline:
            old_wiring(kb)
        began = time.perf_counter()
        served = kb.refresh([docs])
        print(f"first slice: {served.files} files, {served.chunks} chunks in {time.perf_counter() - began:.0f} s",
              flush=True)
        copy(more, docs)
        if args.whole:
            cold_copies(args.reindex_chars, docs)
        pipeline = make_pipeline(kb)
        results = asyncio.run(measure(kb, pipeline, questions, args.idle_questions, args.every, docs))
    results = {"wiring": "old: one shared embedder, normal priority" if args.baseline
               else "indexer's own embedder at the lowest CPU priority",
               "serve_slice": {"files": served.files, "chunks": served.chunks}, **results,
               "settings": {k: getattr(args, k) for k in ("serve_chars", "reindex_chars", "idle_questions", "every",
                                                          "whole")}}
    print(json.dumps(results, ensure_ascii=False, indent=1))
    save(args.out or ("reindex_latency_baseline" if args.baseline else "reindex_latency"), results)


if __name__ == "__main__":
    main()
