"""The evidence gate per language pair: how many answerable questions it refuses (false refusals) and how
many unrelated ones it refuses — questions of the other dataset (statutes asked about Wikipedia and the
other way round), which no passage answers — on the default settings.

    .venv/bin/python benchmarks/gate_pairs.py --data-dir DATA_DIR   (squad2 and all of lawref indexed there)

Pairs: en→en squad2 answerable (60) · lawref/questions-en; zh→zh lawref (60) · squad2/questions-zh;
zh→en squad2/questions-zh · lawref (60); en→zh lawref/questions-en · squad2 answerable (60).

    .venv/bin/python benchmarks/gate_pairs.py --data-dir DATA_DIR --fit-translated zh>en [--write]

--fit-translated PAIR also measures that pair at each (weight, centre) of the gate's translated-words term
(rag.judging.gate: the share of the question's words the best other-language sentence holds translated) on a
grid, and chooses the one that refuses the most unrelated questions with at most MAX_FALSE of the answerable
ones refused (ties: fewer false refusals, then the smaller weight); --write puts it into
rag/judging/calibration.json (`gate.translated`), which the gate reads.
"""

import argparse
import asyncio
import json
import random
import sys
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rag.knowledge_base import KnowledgeBase, make_pipeline  # noqa: E402
from benchmarks.common import DATASETS, save, seeded_settings  # noqa: E402
from rag.config import Settings  # noqa: E402
from rag.judging import calibration  # noqa: E402
from rag.judging.calibration import fitted  # noqa: E402
from rag.judging.gate import EvidenceGate  # noqa: E402
from rag.types import Answer  # noqa: E402


def rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def sample(questions: list[str], n: int = 60) -> list[str]:
    return random.Random(7).sample(questions, n) if len(questions) > n else questions


async def refused(pipeline, questions: list[str]) -> int:
    count = 0
    for question in questions:
        async for item in pipeline.answer(question):
            if isinstance(item, Answer):
                count += item.refused
    return count


GRID_WEIGHTS = (0.0, 2.0, 3.0, 4.0)
GRID_CENTRES = (0.25, 0.3, 0.35)
MAX_FALSE = 0.05  # of the answerable questions refused, at most


def with_translated(pipeline, pair: tuple[str, str], weight: float, centre: float) -> None:
    """The pipeline's gate, with the translated-words term of `pair` set to (weight, centre)."""
    config = pipeline.gate.config
    pipeline.gate = EvidenceGate(replace(config, translated={**config.translated, pair: (weight, centre)}))


def choose_translated(table: list[dict], answerable: int) -> dict:
    """The row of `table` (one per grid point: weight, centre, false_refusals, unrelated_refused) that refuses
    the most unrelated questions with at most MAX_FALSE of the `answerable` ones refused (ties: fewer false
    refusals, then the smaller weight)."""
    allowed = [r for r in table if r["false_refusals"] <= MAX_FALSE * answerable]
    if not allowed:  # none within the budget: the fewest false refusals
        return min(table, key=lambda r: (r["false_refusals"], -r["unrelated_refused"], r["weight"]))
    return max(allowed, key=lambda r: (r["unrelated_refused"], -r["false_refusals"], -r["weight"]))


def calibration_updates(pair: str, chosen: dict, answerable: int, unrelated: int) -> dict[tuple[str, ...], object]:
    """The translated-words term of rag/judging/calibration.json that `chosen` sets, with what it was fitted on."""
    data = (f"{pair}: {answerable} answerable and {unrelated} unrelated questions (module docstring); grid "
            f"{list(GRID_WEIGHTS)} x {list(GRID_CENTRES)}: false refusals {chosen['false_refusals']}, unrelated "
            f"refused {chosen['unrelated_refused']}")
    return {("gate", "translated", pair): {
        "weight": chosen["weight"], "centre": chosen["centre"],
        "fitted": fitted("benchmarks/gate_pairs.py", data, "benchmarks/results/gate_pairs.json")}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--fit-translated", metavar="PAIR", help="e.g. zh>en: fit that pair's translated term")
    parser.add_argument("--write", action="store_true",
                        help="write the fitted translated term into rag/judging/calibration.json")
    args = parser.parse_args()
    settings = Settings(data_dir=args.data_dir, _env_file=None)
    squad_en = [r["question"] for r in rows(DATASETS / "squad2" / "questions.jsonl") if r["answerable"]]
    squad_zh = [r["question"] for r in rows(DATASETS / "squad2" / "questions-zh.jsonl")]
    law_zh = [r["question"] for r in rows(DATASETS / "lawref" / "questions.jsonl")]
    law_en = [r["question"] for r in rows(DATASETS / "lawref" / "questions-en.jsonl")]
    pairs = {"en>en": ("squad2", sample(squad_en), law_en), "zh>zh": ("lawref", sample(law_zh), squad_zh),
             "zh>en": ("squad2", squad_zh, sample(law_zh)), "en>zh": ("lawref", law_en, sample(squad_en))}
    results = {}
    for pair, (dataset, answerable, unrelated) in pairs.items():
        kb = KnowledgeBase.for_dataset(seeded_settings(settings, DATASETS / dataset), DATASETS / dataset, [])
        kb.refresh([DATASETS / dataset / "docs"], [])
        pipeline = make_pipeline(kb)
        false, right = asyncio.run(refused(pipeline, answerable)), asyncio.run(refused(pipeline, unrelated))
        results[pair] = {"answerable": len(answerable), "false_refusals": false,
                         "unrelated": len(unrelated), "unrelated_refused": right}
        print(pair, json.dumps(results[pair]), flush=True)
        if pair == args.fit_translated:
            key = tuple(pair.split(">"))
            table = []
            for weight in GRID_WEIGHTS:
                for centre in GRID_CENTRES:
                    with_translated(pipeline, key, weight, centre)
                    table.append({"weight": weight, "centre": centre,
                                  "false_refusals": asyncio.run(refused(pipeline, answerable)),
                                  "unrelated_refused": asyncio.run(refused(pipeline, unrelated))})
                    print(pair, json.dumps(table[-1]), flush=True)
            chosen = choose_translated(table, len(answerable))
            results[pair] |= {"translated_grid": table, "translated_chosen": chosen}
            if args.write:
                written = calibration.write(calibration_updates(pair, chosen, len(answerable), len(unrelated)))
                print(f"wrote {written.source} (version {written.version})", flush=True)
    save("gate_pairs", results)


if __name__ == "__main__":
    main()
