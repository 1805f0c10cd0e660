"""Fit the evidence gate's per-language models on public data instead of on evaluation sets.

    .venv/bin/python training/fit_gate.py --mirrors /work/.mirror --work DIR [--out FILE]

Each half set of training/public_data.py (half of the articles indexed, every question asked: answerable
only where its article is there) is answered by the embedded default's retrieval and sentence evidence, and
the gate's signals recorded (benchmarks/calibrate_gate.py's `signals`); per language — English from XQuAD's
English half, Chinese from CMRC's and XQuAD's Chinese halves — the signal set, the monotone logistic model and
its threshold are chosen as calibrate_gate.py chooses them (cross-validation on one half of the questions,
at most MAX_FALSE_REFUSAL false refusals there, the other half reported). --out writes the models as JSON
(the shape of rag.judging.gate.AnswerabilityModel: weights, bias; answer when Σ w·x + bias ≥ 0).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.calibrate_gate import calibrate, choose_signals, signals  # noqa: E402
from rag.config import Settings  # noqa: E402
from rag.judging.gate import GateConfig  # noqa: E402
from rag.knowledge_base import KnowledgeBase  # noqa: E402
from training.public_data import BUILDERS  # noqa: E402

MAX_FALSE_REFUSAL = 0.04  # as calibrate_gate.py's default: a point below the 5 % aim
LANGUAGES = {"en": ("xquad-en-half",), "zh": ("cmrc-half", "xquad-zh-half")}


def signal_rows(name: str, mirrors: Path, work: Path) -> list[dict]:
    saved = work / f"{name}-gate.jsonl"
    if saved.exists():
        return [json.loads(line) for line in saved.read_text(encoding="utf-8").splitlines()]
    dataset = BUILDERS[name](mirrors, work)
    kb = KnowledgeBase.for_dataset(Settings(data_dir=work / "data", _env_file=None), dataset.docs, [])
    kb.refresh([dataset.docs])
    questions = [SimpleNamespace(id=r["id"], question=r["question"], answerable=r["answerable"])
                 for r in dataset.rows()]
    rows = signals(kb, questions, GateConfig().top_n)
    saved.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mirrors", type=Path, required=True)
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    models = {}
    for language, names in LANGUAGES.items():
        rows = [r for name in names for r in signal_rows(name, args.mirrors, args.work)]
        chosen, candidates = choose_signals(rows, MAX_FALSE_REFUSAL)
        models[language] = calibrate(rows, chosen, MAX_FALSE_REFUSAL) | {
            "data": {name: sum(1 for _ in signal_rows(name, args.mirrors, args.work)) for name in names},
            "answerable": sum(r["answerable"] for r in rows), "unanswerable": sum(not r["answerable"] for r in rows),
            "cross_validated_candidates": candidates}
        print(language, json.dumps({k: models[language][k] for k in ("signals", "weights", "bias", "holdout")}))
    if args.out:
        args.out.write_text(json.dumps(models, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
