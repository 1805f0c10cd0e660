"""Retrieval quality on the real question sets: recall@1/5/10/100 and MRR@10 for BM25, dense and both
hybrid fusions, through `ai-employee eval` exactly as a user runs it.

    .venv/bin/python benchmarks/retrieval_quality.py --data-dir DATA_DIR [--sets lawref,squad2] [--seed]
    .venv/bin/python benchmarks/retrieval_quality.py --data-dir DATA_DIR --seed \
        --sets lawref,lawref-en,squad2,squad2-zh --variants hybrid-scores --name retrieval_quality_xlang

DATA_DIR should hold the embeddings of a previous run (e.g. the cold lawref index of index_lawref.py), or
--seed copies the precomputed ones (../shared/datasets/lawref/embeddings, lawref and squad2) into it: the
eval indexes reuse them, so only the questions are embedded. squad2 is scored on its answerable questions
(the unanswerable ones have no gold passage). The cross-language sets ask each corpus in the other
language: squad2-zh (Chinese questions, English articles) and lawref-en (English questions, Chinese
statutes), against the whole corpus; the mixed-* sets ask every pair against one knowledge base holding
both corpora (copied into DATA_DIR/mixed). Results: benchmarks/results/NAME.json (retrieval_quality.json).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.common import DATASETS, cli, save  # noqa: E402

VARIANTS = {
    "bm25": (["--mode", "bm25"], {}),
    "dense": (["--mode", "dense"], {}),
    "hybrid-rrf": (["--mode", "hybrid"], {"AIE_FUSION": "rrf", "AIE_DENSE_WEIGHT": "1", "AIE_BM25_WEIGHT": "1"}),
    "hybrid-scores": (["--mode", "hybrid"], {"AIE_FUSION": "scores", "AIE_DENSE_WEIGHT": "0.6",
                                             "AIE_BM25_WEIGHT": "0.4"}),
}
KEYS = ("recall@1", "recall@5", "recall@10", "recall@100", "mrr@10")
# Set name -> (dataset folder, questions file under it): the question language -> the passage language.
SETS = {
    "lawref": ("lawref", "questions.jsonl"),  # zh -> zh
    "squad2": ("squad2", "questions.jsonl"),  # en -> en
    "lawref-en": ("lawref", "questions-en.jsonl"),  # en -> zh
    "squad2-zh": ("squad2", "questions-zh.jsonl"),  # zh -> en
    # The same questions against one knowledge base holding both corpora, where the languages compete.
    "mixed-lawref": ("mixed", "lawref-questions.jsonl"),  # zh -> zh
    "mixed-squad2": ("mixed", "squad2-questions.jsonl"),  # en -> en
    "mixed-lawref-en": ("mixed", "lawref-questions-en.jsonl"),  # en -> zh
    "mixed-squad2-zh": ("mixed", "squad2-questions-zh.jsonl"),  # zh -> en
}


def seed(data_dir: Path) -> None:
    """Start the work cache from the shared precomputed vectors (a copy: never the original)."""
    target = data_dir / "cache.sqlite3"
    if not target.exists():
        data_dir.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(DATASETS / "lawref" / "embeddings" / "cache.sqlite3", target)


def mixed(data_dir: Path) -> Path:
    """A dataset folder (in DATA_DIR, outside the project) whose docs/ holds lawref and squad2 side by side
    (docs/lawref/…, docs/squad2/…), with every question file's gold paths prefixed to match."""
    folder = data_dir / "mixed"
    for corpus in ("lawref", "squad2"):
        docs = folder / "docs" / corpus
        if not docs.exists():
            shutil.copytree(DATASETS / corpus / "docs", docs)
        for questions in sorted((DATASETS / corpus).glob("questions*.jsonl")):
            lines = questions.read_text(encoding="utf-8").splitlines()
            rows = [json.loads(line) for line in lines if line.strip()]
            for row in rows:
                row["gold"] = [{**gold, "file": f"{corpus}/{gold['file']}"} for gold in row.get("gold", [])]
            (folder / f"{corpus}-{questions.name}").write_text(
                "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")
    return folder


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--sets", default="lawref,squad2")
    parser.add_argument("--variants", default=",".join(VARIANTS))
    parser.add_argument("--seed", action="store_true", help="copy the shared precomputed vectors first")
    parser.add_argument("--name", default="retrieval_quality", help="results file name (without .json)")
    parser.add_argument("--limit", type=int, help="only the first N questions of each set")
    args = parser.parse_args()
    if args.seed:
        seed(args.data_dir)
    results: dict[str, dict] = {}
    for name in args.sets.split(","):
        results[name] = {}
        dataset, questions = SETS[name]
        folder = mixed(args.data_dir) if dataset == "mixed" else DATASETS / dataset
        for variant in args.variants.split(","):
            flags, env = VARIANTS[variant]
            out = args.data_dir / f"eval-{name}-{variant}.jsonl"
            limit = ["--limit", str(args.limit)] if args.limit else []
            summary, stats = cli(["eval", str(folder), "--questions", str(folder / questions), *flags, *limit,
                                  "--out", str(out)], args.data_dir, timed=True, extra_env=env)
            results[name][variant] = {k: summary[k] for k in KEYS} | {
                "answerable": summary["answerable"], "chunks": summary["chunks"], "wall_s": stats["wall_s"]}
            print(name, variant, results[name][variant], flush=True)
    save(args.name, {"sets": results, "limit": args.limit})


if __name__ == "__main__":
    main()
