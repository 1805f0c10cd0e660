"""Knowledge scopes: quality inside a scope against an index of that scope alone, and what the filter costs.

    .venv/bin/python benchmarks/scope_filter.py --data-dir DATA_DIR [--size 60000] [--queries 300]

Quality: lawref's first folders (刑法, 民法典, 行政法规…) are its collections. Every question is asked
(a) of the whole index with the scope set to its gold article's collection, and (b) of an index built from
that collection alone (the same files, so the same chunks and embeddings; only BM25's corpus statistics
differ), and recall@10 / MRR@10 of both are compared; the whole index without a scope is shown beside.
DATA_DIR holds the work cache, so the per-collection indexes cost no embedding. BENCH_DATASETS may point at
a slice of lawref (see benchmarks/common.py).

Cost: the real index tiled to --size chunks (benchmarks/synthetic.py), a tenth of the rows put in one
collection; hybrid retrieval p50/p95 with the query vector given, without a scope, with the 10 % scope, with
a scope holding the other 90 %, and with 1 % of the rows access-listed in a channel (readers checked).
Results: benchmarks/results/scope_filter.json.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rag.knowledge_base import KnowledgeBase  # noqa: E402
from benchmarks.common import DATASETS, percentiles, save  # noqa: E402
from benchmarks.synthetic import FixedStore, tiled_snapshot  # noqa: E402
from rag.types import collection_of  # noqa: E402
from rag.config import Settings  # noqa: E402
from rag.evaluation import first_hit_rank, load_questions  # noqa: E402
from rag.index.snapshot import Snapshot  # noqa: E402
from rag.index.retrieval import Retriever  # noqa: E402
from rag.types import EVERYTHING, Scope  # noqa: E402

LAWREF = DATASETS / "lawref"


def scores(ranks: list[int | None]) -> dict[str, float]:
    n = max(len(ranks), 1)
    return {"recall@10": round(sum(r is not None for r in ranks) / n, 4),
            "mrr@10": round(sum(1 / r for r in ranks if r is not None) / n, 4), "questions": len(ranks)}


def quality(data_dir: Path) -> dict[str, object]:
    settings = Settings(data_dir=data_dir, _env_file=None)
    docs = LAWREF / "docs"
    whole = KnowledgeBase(settings, data_dir / "scopes" / "whole")
    whole.refresh([docs])
    folders = sorted(p.name for p in docs.iterdir() if p.is_dir())
    questions = [q for q in load_questions(LAWREF / "questions.jsonl") if q.gold]
    by_collection: dict[str, list] = {}
    for q in questions:
        by_collection.setdefault(collection_of(q.gold[0].file), []).append(q)
    report: dict[str, object] = {"collections": {}}
    totals = {"scoped": [], "alone": [], "unscoped": []}
    for name in folders:
        asked = by_collection.get(name, [])
        if not asked:
            continue
        alone = KnowledgeBase(settings, data_dir / "scopes" / f"only-{name}")
        alone.refresh([docs], exclude=[f for f in folders if f != name])
        scope = Scope(frozenset({name}), frozenset())
        ranks = {
            "scoped": [first_hit_rank(whole.retriever.search(q.question, top_k=10, allowed=scope), q.gold) for q in asked],
            "alone": [first_hit_rank(alone.retriever.search(q.question, top_k=10), q.gold) for q in asked],
            "unscoped": [first_hit_rank(whole.retriever.search(q.question, top_k=10), q.gold) for q in asked],
        }
        for key, values in ranks.items():
            totals[key].extend(values)
        chunks = alone.retriever.snapshot.manifest.chunk_count
        report["collections"][name] = {"chunks": chunks, **{k: scores(v) for k, v in ranks.items()}}
        print(name, json.dumps(report["collections"][name], ensure_ascii=False), flush=True)
        alone.retriever.close()
    report["all"] = {k: scores(v) for k, v in totals.items()}
    report["all"]["recall@10_scoped_minus_alone"] = round(
        report["all"]["scoped"]["recall@10"] - report["all"]["alone"]["recall@10"], 4)
    report["whole_index_chunks"] = whole.retriever.snapshot.manifest.chunk_count
    whole.retriever.close()
    return report


def with_collections(snapshot: Snapshot, share: float, listed: float, seed: int = 5) -> Snapshot:
    """The snapshot with `share` of its rows in collection "ten" (the rest in "rest") and `listed` of them
    access-listed, chosen at random."""
    rng = np.random.default_rng(seed)
    draw = rng.random(len(snapshot.chunks))
    chunks = [replace(c, collection="ten" if d < share else "rest",
                      access=("U0LISTED",) if share <= d < share + listed else ())
              for c, d in zip(snapshot.chunks, draw)]
    return Snapshot(snapshot.path, snapshot.manifest, chunks, snapshot.dense, snapshot.lexical)


def exact_recall(snapshot: Snapshot, scope: Scope, vectors: list[np.ndarray], k: int = 10) -> float | None:
    """Share of the exact dense top k inside the scope that the filtered dense search finds."""
    rows = snapshot.row_filter(None, scope)
    if rows is None:
        return None
    found = 0
    for vector in vectors[:100]:
        exact = rows[np.argsort(-(np.asarray(snapshot.dense.vectors[rows]) @ vector))[:k]]
        found += len(set(exact.tolist()) & {r for r, _ in snapshot.dense_ranking(vector, k, rows)})
    return round(found / (k * min(len(vectors), 100)), 4)


def cost(data_dir: Path, size: int, queries: int, runs: int) -> dict[str, object]:
    settings = Settings(data_dir=data_dir, _env_file=None)
    real = KnowledgeBase(settings, data_dir / "scopes" / "whole").retriever.snapshot
    copies = max(1, round(size / real.dense.size))
    snapshot = with_collections(tiled_snapshot(real, copies, hnsw_threshold=settings.hnsw_threshold), 0.10, 0.01)
    retriever = Retriever(FixedStore(snapshot), KnowledgeBase(settings, data_dir / "x").embedder)
    asked = [q.question for q in load_questions(LAWREF / "questions.jsonl")][:queries]
    vectors = [retriever.embedder.embed_query(q) for q in asked]
    scopes = {"no scope": EVERYTHING,
              "10 % of the chunks": Scope(frozenset({"ten"}), frozenset()),
              "90 % of the chunks": Scope(frozenset({"rest"}), frozenset()),
              "everything, in a channel (1 % access-listed)": Scope(None, frozenset())}
    report: dict[str, object] = {"chunks": snapshot.dense.size, "dense_index": snapshot.dense.kind,
                                 "queries": len(asked), "runs": runs, "hybrid_without_query_embedding": {}}
    for label, scope in scopes.items():
        times, sizes = [], []
        for _ in range(runs):
            for question, vector in zip(asked, vectors):
                hits, timings = retriever.search_timed(question, top_k=10, query_vector=vector, allowed=scope)
                times.append(timings.total_ms)
                sizes.append(len(hits))
                assert all(scope.allows(h.chunk) for h in hits), f"{label}: a hit outside the scope"
        report["hybrid_without_query_embedding"][label] = {**percentiles(times),
                                                           "mean_hits": round(statistics.mean(sizes), 2),
                                                           "dense_recall_of_exact_top10": exact_recall(snapshot, scope, vectors)}
        print(label, json.dumps(report["hybrid_without_query_embedding"][label]), flush=True)
    retriever.close()
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--size", type=int, default=60_000)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--skip-quality", action="store_true")
    args = parser.parse_args()
    results: dict[str, object] = {"dataset": str(LAWREF)}
    if not args.skip_quality:
        results["quality"] = quality(args.data_dir)
    results["cost"] = cost(args.data_dir, args.size, args.queries, args.runs)
    save("scope_filter", results)


if __name__ == "__main__":
    main()
