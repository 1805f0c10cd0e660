"""Answer-pipeline overhead on the embedded default: the time spent before the answer model is called
(rewrite skipped, query embedding, hybrid retrieval, fusion, evidence gate), at the real lawref size
and tiled to ~60k chunks, and the same on the cache-hit path (question asked again). The calibrated
gate scores the top passages' sentences with the embedded model; that cost ("evidence") is reported on
its own, beside the rest.

    .venv/bin/python benchmarks/pipeline_overhead.py --index-dir DATA/eval/docs --questions 200 [--redis-url URL]
        [--set lawref|squad2|handbook] [--copies N]

The questions come from the set the index was built from: lawref's are Chinese (the zh gate reads only
the passage cosine), squad2's English (the en gate reads sentence evidence, so they show its cost), the
handbook's both (benchmarks/data/handbook_questions.jsonl against examples/handbook, an index of both
languages: there the other language's best passages join the top ones, rag.answering.pools — "pool" is that step).

The answer model is a local stand-in that streams instantly, so model time is not in the numbers.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rag.knowledge_base import KnowledgeBase, make_pipeline  # noqa: E402
from benchmarks.common import DATASETS, percentiles, save  # noqa: E402
from benchmarks.question_sets import HANDBOOK_QUESTIONS  # noqa: E402
from benchmarks.synthetic import FixedStore, tiled_snapshot  # noqa: E402
from rag.config import Settings  # noqa: E402
from rag.index.snapshot import SnapshotStore  # noqa: E402
from rag.index.retrieval import Retriever  # noqa: E402
from rag.types import Answer  # noqa: E402
from tests.fakes.openai_server import FakeOpenAIServer  # noqa: E402


async def timings(pipeline, questions: list[str]) -> list[dict[str, float]]:
    out = []
    for question in questions:
        async for item in pipeline.answer(question):
            if isinstance(item, Answer):
                out.append(item.timings_ms)
    return out


def summarize(rows: list[dict[str, float]]) -> dict[str, object]:
    before = [r["before_answer_model"] for r in rows]
    evidence = [r.get("evidence", 0.0) for r in rows]
    without_evidence = [b - e for b, e in zip(before, evidence)]
    without_embedding = [b - r.get("embed", 0.0) for b, r in zip(without_evidence, rows)]
    return {"before_answer_model": percentiles(before), "without_evidence": percentiles(without_evidence),
            "evidence": percentiles(evidence), "without_evidence_and_query_embedding": percentiles(without_embedding),
            "pool": percentiles([r.get("pool", 0.0) for r in rows])}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--index-dir", type=Path, required=True)
    parser.add_argument("--questions", type=int, default=200)
    parser.add_argument("--copies", type=int, default=3, help="tiling for the larger index (3 × lawref ≈ 60k)")
    parser.add_argument("--set", dest="dataset", choices=("lawref", "squad2", "handbook"), default="lawref")
    parser.add_argument("--redis-url", default=None)
    args = parser.parse_args()
    path = HANDBOOK_QUESTIONS if args.dataset == "handbook" else DATASETS / args.dataset / "questions.jsonl"
    rows = [json.loads(line) for line in open(path, encoding="utf-8")]
    questions = [r["question"] for r in rows if r.get("answerable", True)][: args.questions]
    real = SnapshotStore(args.index_dir).load_current()
    results: dict[str, object] = {"questions": len(questions), "cache": "redis" if args.redis_url else "memory"}
    with tempfile.TemporaryDirectory() as tmp, FakeOpenAIServer() as model:
        model.script.chat_reply, model.script.chat_pieces = "根据规定[S1]。", 2
        settings = Settings(data_dir=Path(tmp), _env_file=None, redis_url=args.redis_url,
                            answer_base_url=model.base_url, answer_model="stand-in")
        tiled = tiled_snapshot(real, args.copies, settings.hnsw_threshold)
        for label, snapshot in ((args.dataset, real), (f"{args.dataset} x{args.copies}", tiled)):
            kb = KnowledgeBase(settings, Path(tmp) / "unused")
            kb.__dict__["retriever"] = Retriever(FixedStore(snapshot), kb.embedder)
            pipeline = make_pipeline(kb)

            async def twice(pipeline=pipeline):
                return await timings(pipeline, questions), await timings(pipeline, questions)

            cold, warm = asyncio.run(twice())
            results[label] = {"chunks": snapshot.dense.size, "first_time": summarize(cold), "cache_hit": summarize(warm)}
            print(label, json.dumps(results[label]), flush=True)
    save("pipeline_overhead" if args.dataset == "lawref" else f"pipeline_overhead_{args.dataset}", results)


if __name__ == "__main__":
    main()
