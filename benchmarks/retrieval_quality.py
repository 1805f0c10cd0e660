"""Retrieval quality on the real question sets: recall@1/5/10/100 and MRR@10 for BM25, dense and both
hybrid fusions, through `ai-employee eval` exactly as a user runs it.

    .venv/bin/python benchmarks/retrieval_quality.py --data-dir DATA_DIR [--sets lawref,squad2]

DATA_DIR should hold the embeddings of a previous run (e.g. the cold lawref index of index_lawref.py):
the eval indexes reuse them, so only the questions are embedded. squad2 is scored on its answerable
questions (the unanswerable ones have no gold passage). Results: benchmarks/results/retrieval_quality.json.
"""

from __future__ import annotations

import argparse
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--sets", default="lawref,squad2")
    parser.add_argument("--variants", default=",".join(VARIANTS))
    args = parser.parse_args()
    results: dict[str, dict] = {}
    for name in args.sets.split(","):
        results[name] = {}
        for variant in args.variants.split(","):
            flags, env = VARIANTS[variant]
            out = args.data_dir / f"eval-{name}-{variant}.jsonl"
            summary, stats = cli(["eval", str(DATASETS / name), *flags, "--out", str(out)], args.data_dir,
                                 timed=True, extra_env=env)
            results[name][variant] = {k: summary[k] for k in KEYS} | {
                "answerable": summary["answerable"], "chunks": summary["chunks"], "wall_s": stats["wall_s"]}
            print(name, variant, results[name][variant], flush=True)
    save("retrieval_quality", {"sets": results})


if __name__ == "__main__":
    main()
