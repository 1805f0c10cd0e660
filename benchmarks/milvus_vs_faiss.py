"""FAISS + bm25s snapshot vs Milvus Lite, side by side in one run: build time, hybrid query latency (with and
without the query embedding), recall@10/@100 on real questions, recall of the exact dense top 10, memory;
and the hybrid variants Milvus offers (its RRF and weighted rankers) against our fusion of exact scores.

    .venv/bin/python benchmarks/milvus_vs_faiss.py --data-dir DATA_DIR --docs DOCS --questions Q.jsonl \
        [--synthetic 60000[,1000000]] [--out /tmp/bench-milvus]

DATA_DIR holds the work cache (embeddings are reused, not recomputed); DOCS is lawref/docs or a subset of it;
only questions whose gold files are all indexed are scored. Results: benchmarks/results/milvus_vs_faiss.json.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rag.knowledge_base import KnowledgeBase  # noqa: E402
from benchmarks.common import percentiles, save  # noqa: E402
from benchmarks.synthetic import tile_lexical, tile_vectors  # noqa: E402
from rag.config import Settings  # noqa: E402
from rag.evaluation import first_hit_rank, load_questions  # noqa: E402
from rag.index.dense import DenseIndex  # noqa: E402
from rag.index.milvus_schema import HNSW_EF, chunk_row, create_chunk_collection, normalise  # noqa: E402
from rag.index.milvus_search import MilvusSnapshot, TermCounts  # noqa: E402
from rag.index.snapshot import Snapshot  # noqa: E402
from rag.index.retrieval import Retriever  # noqa: E402
from rag.types import Hit  # noqa: E402

DEPTH = 100


class _OneIndex:
    """A store serving one already loaded index (synthetic sizes)."""

    def __init__(self, index) -> None:
        self.index = index

    def current_version(self) -> str:
        return self.index.version

    def load_current(self):
        return self.index


def knowledge_bases(data_dir: Path, out: Path) -> tuple[KnowledgeBase, KnowledgeBase]:
    settings = Settings(data_dir=data_dir, _env_file=None)
    milvus = settings.model_copy(update={"vector_store": "milvus", "milvus_uri": str(out / "milvus.db")})
    return KnowledgeBase(settings, out / "faiss"), KnowledgeBase(milvus, out / "milvus")


def ranker_search(index: MilvusSnapshot, ranker, query: str, vector: np.ndarray, k: int) -> list[Hit]:
    """Milvus' own hybrid search: both requests and the ranker run inside Milvus."""
    from pymilvus import AnnSearchRequest

    requests = [
        AnnSearchRequest(data=[vector.tolist()], anns_field="dense", limit=DEPTH,
                         param={"metric_type": "IP", "params": {"ef": HNSW_EF}}),
        AnnSearchRequest(data=[normalise(query)], anns_field="sparse", limit=DEPTH, param={"metric_type": "BM25"}),
    ]
    found = index.client.hybrid_search(index.collection, requests, ranker=ranker, limit=k, output_fields=["id"])
    return [Hit(chunk, 0.0) for chunk in index.chunks_at([hit["id"] for hit in found[0]])]


def quality_and_latency(search, questions, vectors) -> dict[str, object]:
    ranks, samples = [], []
    for question, vector in zip(questions, vectors):
        began = time.perf_counter()
        hits = search(question.question, vector)
        samples.append((time.perf_counter() - began) * 1000)
        ranks.append(first_hit_rank(hits, question.gold))
    recall = {f"recall@{k}": round(sum(r is not None and r <= k for r in ranks) / len(ranks), 4) for k in (10, 100)}
    return recall | {"latency_without_query_embedding": percentiles(samples)}


def with_embedding(retriever: Retriever, questions, n: int) -> dict[str, float]:
    samples = []
    for question in questions[:n]:
        began = time.perf_counter()
        retriever.search(question.question, top_k=10)
        samples.append((time.perf_counter() - began) * 1000)
    return percentiles(samples)


def exact_top10_recall(dense_search, vectors_all: np.ndarray, queries: np.ndarray, key_of) -> float:
    found = 0
    for query in queries:
        exact = set(np.argsort(-(vectors_all @ query))[:10].tolist())
        found += len(exact & {key_of(key) for key, _ in dense_search(query, 10)})
    return round(found / (10 * len(queries)), 4)


def real_set(args, faiss_kb: KnowledgeBase, milvus_kb: KnowledgeBase) -> dict[str, object]:
    from pymilvus import RRFRanker, WeightedRanker

    result: dict[str, object] = {}
    for name, kb in (("faiss", faiss_kb), ("milvus_lite", milvus_kb)):
        report = kb.refresh([args.docs])
        result[name] = {"build_s": report.seconds, "chunks": report.chunks, "dense_index": report.dense_index,
                        "embedded_during_build": report.embedded, "timings": report.timings}
        print(name, "built", result[name], flush=True)
    real: Snapshot = faiss_kb.retriever.snapshot
    milvus: MilvusSnapshot = milvus_kb.retriever.snapshot
    indexed = set(real.manifest.files)
    questions = [q for q in load_questions(args.questions) if q.answerable and q.gold
                 and all(g.file in indexed for g in q.gold)][: args.max_questions]
    began = time.perf_counter()
    vectors = [faiss_kb.embedder.embed_query(q.question) for q in questions]
    result["questions"] = len(questions)
    result["query_embedding_ms_mean"] = round((time.perf_counter() - began) * 1000 / len(questions), 2)
    variants = {
        "faiss": lambda q, v: faiss_kb.retriever.search(q, top_k=DEPTH, query_vector=v),
        "milvus_lite": lambda q, v: milvus_kb.retriever.search(q, top_k=DEPTH, query_vector=v),
        "milvus_lite_rrf_ranker": lambda q, v: ranker_search(milvus, RRFRanker(60), q, v, DEPTH),
        "milvus_lite_weighted_ranker": lambda q, v: ranker_search(milvus, WeightedRanker(0.6, 0.4), q, v, DEPTH),
    }
    result["hybrid"] = {}
    for name, search in variants.items():
        result["hybrid"][name] = quality_and_latency(search, questions, vectors)
        print(name, result["hybrid"][name], flush=True)
    for name, kb in (("faiss", faiss_kb), ("milvus_lite", milvus_kb)):
        result[name]["hybrid_with_query_embedding"] = with_embedding(kb.retriever, questions, args.embed_samples)
    queries = np.vstack(vectors[:100])
    vectors_all = np.asarray(real.dense.vectors)
    row_of = real.row_of
    result["faiss"]["exact_top10_recall"] = exact_top10_recall(
        lambda q, k: real.dense.search(q, k), vectors_all, queries, int)
    result["milvus_lite"]["exact_top10_recall"] = exact_top10_recall(
        lambda q, k: milvus.dense_ranking(q, k, None), vectors_all, queries, lambda key: row_of[key])
    return result


def synthetic(real: Snapshot, size: int, out: Path, questions: list[str], vectors: list[np.ndarray]) -> dict:
    """`real` tiled to about `size` chunks in both backends (HNSW in both above AIE_HNSW_THRESHOLD)."""
    from pymilvus import MilvusClient

    copies = max(1, round(size / real.dense.size))
    size = copies * real.dense.size
    tiled = tile_vectors(real.dense.vectors, size)
    chunks = [replace(c, id=f"{c.id}~{n}") for n in range(copies) for c in real.chunks]
    threshold = Settings(_env_file=None).hnsw_threshold
    entry: dict[str, object] = {"chunks": size}

    began = time.perf_counter()
    snapshot = Snapshot(real.path, replace(real.manifest, version=f"syn-{size}", chunk_count=size), chunks,
                        DenseIndex.build(tiled, threshold), tile_lexical(real.lexical, copies))
    entry["faiss"] = {"build_s": round(time.perf_counter() - began, 1), "dense_index": snapshot.dense.kind}
    client = MilvusClient(str(out / f"synthetic-{size}.db"))
    name = f"syn_{size}"
    if client.has_collection(name):
        client.drop_collection(name)
    began = time.perf_counter()
    create_chunk_collection(client, name, tiled.shape[1], size >= threshold)
    for start in range(0, size, 2000):
        client.insert(name, [chunk_row(c, v) for c, v in zip(chunks[start:start + 2000], tiled[start:start + 2000])])
    client.flush(name)
    entry["milvus_lite"] = {"build_s": round(time.perf_counter() - began, 1),
                            "dense_index": "milvus-hnsw" if size >= threshold else "milvus-flat"}
    milvus = MilvusSnapshot(client, name, replace(snapshot.manifest), TermCounts({}, size))
    row_of = {c.id: row for row, c in enumerate(chunks)}
    queries = np.vstack(vectors[:100])
    for label, index in (("faiss", snapshot), ("milvus_lite", milvus)):
        retriever = Retriever(_OneIndex(index), _NoEmbedder(real))
        samples = []
        for question, vector in zip(questions, vectors):
            began = time.perf_counter()
            retriever.search(question, top_k=10, query_vector=vector)
            samples.append((time.perf_counter() - began) * 1000)
        key_of = int if label == "faiss" else (lambda key: row_of[key])
        entry[label]["hybrid_without_query_embedding"] = percentiles(samples)
        entry[label]["exact_top10_recall"] = exact_top10_recall(
            lambda q, k, i=index: i.dense_ranking(q, k, None), tiled, queries, key_of)
        print(size, label, entry[label], flush=True)
    client.close()
    return entry


class _NoEmbedder:
    """Synthetic runs pass every query vector: only the model's identity is checked."""

    def __init__(self, real: Snapshot) -> None:
        self.model_id, self.dim = real.manifest.embedding_model, real.manifest.dim

    def embed_query(self, text: str) -> np.ndarray:
        raise AssertionError("synthetic runs pass the query vector")


def memory_probe(backend: str, data_dir: Path, out: Path, questions: Path, n: int) -> dict[str, float]:
    """Resident memory (MiB) of a fresh process with the embedding model loaded, then after loading the
    index and answering `n` searches: the difference is what the index costs the serving process."""
    code = (
        "import sys, json; sys.path.insert(0, sys.argv[1])\n"
        "from benchmarks.milvus_vs_faiss import knowledge_bases, rss_mib\n"
        "from pathlib import Path\n"
        "f, m = knowledge_bases(Path(sys.argv[2]), Path(sys.argv[3]))\n"
        "kb = f if sys.argv[4] == 'faiss' else m\n"
        "rows = [json.loads(l) for l in open(sys.argv[5], encoding='utf-8')][: int(sys.argv[6])]\n"
        "kb.embedder.embed_query('warm up'); before = rss_mib()\n"
        "for r in rows: kb.retriever.search(r['question'], top_k=10)\n"
        "print(json.dumps({'model_only_mib': before, 'with_index_mib': rss_mib()}))\n"
    )
    project = str(Path(__file__).resolve().parent.parent)
    done = subprocess.run([sys.executable, "-c", code, project, str(data_dir), str(out), backend, str(questions),
                           str(n)], capture_output=True, text=True, check=True)
    found = json.loads(done.stdout.strip().splitlines()[-1])
    return found | {"index_mib": round(found["with_index_mib"] - found["model_only_mib"], 1)}


def rss_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return round(int(line.split()[1]) / 1024, 1)
    return 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--docs", type=Path, required=True)
    parser.add_argument("--questions", type=Path, required=True)
    parser.add_argument("--out", type=Path, default=Path("/tmp/bench-milvus"))
    parser.add_argument("--synthetic", default="60000", help="sizes, comma-separated (1000000: hours on 2 cores)")
    parser.add_argument("--max-questions", type=int, default=100_000)
    parser.add_argument("--embed-samples", type=int, default=50)
    parser.add_argument("--name", default="milvus_vs_faiss")
    parser.add_argument("--parts", default="real,synthetic,memory")
    args = parser.parse_args()
    parts = set(args.parts.split(","))
    args.out.mkdir(parents=True, exist_ok=True)
    faiss_kb, milvus_kb = knowledge_bases(args.data_dir, args.out)
    results: dict[str, object] = {"docs": str(args.docs)}
    if "real" in parts:
        results["real"] = real_set(args, faiss_kb, milvus_kb)
    else:
        faiss_kb.refresh([args.docs])
    if "synthetic" in parts:
        real = faiss_kb.retriever.snapshot
        rows = [json.loads(line) for line in open(args.questions, encoding="utf-8")][:200]
        questions = [r["question"] for r in rows]
        vectors = [faiss_kb.embedder.embed_query(q) for q in questions]
        results["synthetic"] = {size: synthetic(real, int(size), args.out, questions, vectors)
                                for size in args.synthetic.split(",") if size}
    if "memory" in parts:
        from milvus_lite.server_manager import server_manager_instance

        server_manager_instance.release_all()  # the probes open the Lite file in their own process
        results["memory"] = {b: memory_probe(b, args.data_dir, args.out, args.questions, 50)
                             for b in ("faiss", "milvus_lite")}
        print(json.dumps(results["memory"]), flush=True)
    save(args.name, results)

if __name__ == "__main__":
    main()
