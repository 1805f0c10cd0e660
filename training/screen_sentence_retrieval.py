"""Screen dense retrieval by sentence, offline: every quotable unit of every passage embedded (as the evidence
stage embeds it: with its passage's title and headings), a passage scored by its best unit's cosine to the
question, beside the passage's own vector. A colloquial question may match one sentence of a passage closely
and the passage as a whole loosely.

    .venv/bin/python training/screen_sentence_retrieval.py --sets clef-handbook=/tmp/aie-broad/clef-handbook,...

Per set (its live snapshot; the answerable questions and the set's gold rule): dense recall@5 and @10 by the
passage vector, by the best unit, and by their mean. The units' vectors go to the data dir's work cache (what
the evidence stage would embed anyway), so a second run embeds only the questions.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def recall(scores: np.ndarray, gold: list[list[int]], k: int) -> float:
    order = np.argsort(-scores, axis=1)[:, :k]
    return round(float(np.mean([bool(set(order[n]) & set(g)) for n, g in enumerate(gold) if g])), 3)


def measure(name: str, data_dir: Path) -> dict[str, float]:
    from rag.judging.quotable import quotable_units
    from rag.knowledge_base import make_pipeline
    from training.unit_examples import benchmark_index

    kb, rows, qset = benchmark_index(name, data_dir)
    pipeline = make_pipeline(kb)
    snapshot = kb.retriever.snapshot
    vectors = pipeline.finder.vectors
    chunks = list(snapshot.chunks)
    passage = np.vstack([snapshot.vector(c.id) for c in chunks])
    texts, owner = [], []
    for row, chunk in enumerate(chunks):
        for unit in quotable_units(chunk, 0):
            texts.append(f"{chunk.context}\n{unit.matched_text}")
            owner.append(row)
    print(f"{name}: {len(chunks)} passages, {len(texts)} units", flush=True)
    units = vectors.passages(texts)
    queries = np.vstack(vectors.queries([r["question"] for r in rows], snapshot.version))
    gold = [[i for i, c in enumerate(chunks) if qset.gold_hit(r, c)] for r in rows]
    by_passage = queries @ passage.T
    by_unit = np.full_like(by_passage, -1.0)
    cosines = queries @ units.T
    owner = np.array(owner)
    for row in range(len(chunks)):
        mine = owner == row
        if mine.any():
            by_unit[:, row] = cosines[:, mine].max(axis=1)
    by_unit = np.where(by_unit < 0, by_passage, by_unit)
    both = (by_passage + by_unit) / 2
    return {f"{label}@{k}": recall(scores, gold, k) for label, scores in
            (("passage", by_passage), ("unit", by_unit), ("mean", both)) for k in (5, 10)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sets", required=True, help="NAME=DATA_DIR,...")
    args = parser.parse_args()
    for item in args.sets.split(","):
        name, data_dir = item.split("=")
        print(name, measure(name, Path(data_dir)), flush=True)


if __name__ == "__main__":
    main()
