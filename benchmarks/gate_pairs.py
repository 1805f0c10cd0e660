"""The evidence gate per language pair: how many answerable questions it refuses (false refusals) and how
many unrelated ones it refuses — questions of the other dataset (statutes asked about Wikipedia and the
other way round), which no passage answers — on the default settings.

    .venv/bin/python benchmarks/gate_pairs.py --data-dir DATA_DIR   (squad2 and all of lawref indexed there)

Pairs: en→en squad2 answerable (60) · lawref/questions-en; zh→zh lawref (60) · squad2/questions-zh;
zh→en squad2/questions-zh · lawref (60); en→zh lawref/questions-en · squad2 answerable (60).
"""

import argparse
import asyncio
import json
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rag.knowledge_base import KnowledgeBase, make_pipeline  # noqa: E402
from benchmarks.common import DATASETS, save  # noqa: E402
from rag.config import Settings  # noqa: E402
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data-dir", type=Path, required=True)
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
        kb = KnowledgeBase.for_dataset(settings, DATASETS / dataset, [])
        kb.refresh([DATASETS / dataset / "docs"], [])
        pipeline = make_pipeline(kb)
        false, right = asyncio.run(refused(pipeline, answerable)), asyncio.run(refused(pipeline, unrelated))
        results[pair] = {"answerable": len(answerable), "false_refusals": false,
                         "unrelated": len(unrelated), "unrelated_refused": right}
        print(pair, json.dumps(results[pair]), flush=True)
    save("gate_pairs", results)


if __name__ == "__main__":
    main()
