"""The candidates hybrid retrieval fuses for each question, with what each retriever measured of them and
whether each is the question's gold: the examples a learned fusion is fitted on (training sets) and screened
on (the benchmark corpora, measured only).

    .venv/bin/python training/fusion_examples.py --work DIR --sets xquad,cmrc
    .venv/bin/python training/fusion_examples.py --work DIR --sets clef-handbook --data-dir /tmp/aie-broad/NAME

Training sets (training/public_data.py, built by training/unit_examples.py in DIR/data): a candidate is gold
when its text holds one of the answers in its own language. Benchmark sets (benchmarks/question_sets.py, their
index in --data-dir): the set's own gold rule. One line per question to DIR/NAME-fusion.jsonl: per candidate
(the union of every retriever's top 100), its cosine and BM25 as score fusion reads them, its rank in the dense
and BM25 lists, whether it is in another language than the question, the hand-set fused score, and `gold`.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rag.index import retrieval  # noqa: E402
from rag.config import Settings  # noqa: E402
from rag.knowledge_base import KnowledgeBase, make_pipeline  # noqa: E402
from training.public_data import BUILDERS, Dataset  # noqa: E402
from rag.words.languages import passage_language  # noqa: E402
from training.unit_examples import benchmark_index, holds_answer  # noqa: E402


class FusionRecorder:
    def __init__(self) -> None:
        self.calls: list[tuple] = []
        original = retrieval.score_fusion

        def capture(rankings, exact, weights, foreign=None, sighted=False, scaled=False):
            fused = original(rankings, exact, weights, foreign, sighted, scaled)
            self.calls.append((rankings, exact, foreign or {}, fused))
            return fused

        retrieval.score_fusion = capture


def candidates(recorder: FusionRecorder, retriever, question: str) -> list[dict] | None:
    recorder.calls.clear()
    retriever.search(question, top_k=50)
    if not recorder.calls:
        return None
    rankings, exact, foreign, fused = recorder.calls[0]
    keys = [key for key, _, _, _ in fused]
    chunks = retriever.snapshot.chunks_at(keys)
    rank_of = {name: {key: n for n, (key, _) in enumerate(ranking, 1)} for name, ranking in rankings.items()}
    rows = []
    for (key, score, _, _), chunk in zip(fused, chunks):
        rows.append({"dense": round(exact.get("dense", {}).get(key, 0.0), 5),
                     "bm25": round(exact.get("bm25", {}).get(key, 0.0), 4),
                     "dense_rank": rank_of.get("dense", {}).get(key, 0),
                     "bm25_rank": rank_of.get("bm25", {}).get(key, 0),
                     "foreign": key in foreign, "fused": round(score, 5), "chunk": chunk})
    return rows


def training_rows(name: str, work: Path) -> tuple[KnowledgeBase, list[dict], callable]:
    settings = Settings(data_dir=work / "data", _env_file=None)
    dataset = Dataset(name, work / name, work / f"{name}.jsonl")
    kb = KnowledgeBase.for_dataset(settings, dataset.docs, [])
    kb.refresh([dataset.docs])

    def gold(row: dict, chunk) -> bool:
        return holds_answer(chunk.text, row["answers"].get(passage_language(chunk), []))

    return kb, dataset.rows(), gold


def benchmark_rows(name: str, data_dir: Path) -> tuple[KnowledgeBase, list[dict], callable]:
    kb, rows, qset = benchmark_index(name, data_dir)
    return kb, rows, qset.gold_hit


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--sets", required=True)
    parser.add_argument("--data-dir", type=Path, help="a benchmark set's data dir (its index is built there)")
    args = parser.parse_args()
    recorder = FusionRecorder()
    for name in args.sets.split(","):
        kb, rows, gold = (training_rows(name, args.work) if name in BUILDERS
                          else benchmark_rows(name, args.data_dir))
        retriever = make_pipeline(kb).finder.retriever
        written = 0
        with (args.work / f"{name}-fusion.jsonl").open("w", encoding="utf-8") as out:
            for row in rows:
                found = candidates(recorder, retriever, row["question"])
                if found is None:
                    continue
                for c in found:
                    c["gold"] = bool(gold(row, c.pop("chunk")))
                out.write(json.dumps({"id": row["id"], "lang": row.get("lang", ""), "kind": row.get("kind", ""),
                                      "article": row.get("article", ""), "candidates": found},
                                     ensure_ascii=False) + "\n")
                written += 1
        print(f"{name}: {written} questions", flush=True)


if __name__ == "__main__":
    main()
