"""The anchors of each language pair's cosine scale (rag.judging.scales.ANCHORS) on real questions.

    .venv/bin/python benchmarks/calibrate_pairs.py --data-dir DATA_DIR [--write]

With --write, the anchors go into rag/judging/calibration.json (`scales.anchors`, with what each pair was
measured on), which rag.judging.scales reads.

A question and a passage in different languages score lower than in one language, and closer together:
related and unrelated passages are less far apart. So a cross-language cosine `s` is mapped to
`a·s + b`, the line through two anchors per language pair: the median of answerable questions (their
best passage, and their best sentence, as the gate reads them) and the median of unrelated questions
(questions of the other dataset: statutes asked about Wikipedia and the other way round), each taken to
the median of the same two kinds in the passage's own language. Question sets (../shared/datasets):

  zh→en: squad2/questions-zh (answerable) · lawref/questions (unrelated), against squad2/docs
  en→en: squad2/questions answerable · lawref/questions-en (unrelated), against squad2/docs
  en→zh: lawref/questions-en (answerable) · squad2/questions (unrelated), against all of lawref/docs
  zh→zh: lawref/questions (answerable) · squad2/questions-zh (unrelated), against all of lawref/docs

lawref is indexed whole, its vectors seeded from ../shared/datasets/lawref/embeddings.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import shutil
import sqlite3
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import rag.judging.scales  # noqa: E402
from rag.knowledge_base import KnowledgeBase, make_pipeline  # noqa: E402
from benchmarks.common import DATASETS, save, seeded_settings  # noqa: E402
from rag.answering.meaning import IndexedMeaning  # noqa: E402
from rag.config import Settings  # noqa: E402
from rag.judging import calibration  # noqa: E402
from rag.judging.calibration import fitted  # noqa: E402
from rag.judging.evidence import gather_evidence  # noqa: E402
from rag.words.languages import detect_language  # noqa: E402

SAMPLE = 60  # questions per kind and pair (all when a set has fewer)
LEVELS = ("dense", "sentence")


def rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def sample(questions: list[str], n: int = SAMPLE) -> list[str]:
    return random.Random(7).sample(questions, n) if len(questions) > n else questions


def seed_work_cache(data_dir: Path) -> None:
    """Add the shared lawref vectors to the data dir's work cache (the seed itself is never written)."""
    data_dir.mkdir(parents=True, exist_ok=True)
    seed = DATASETS / "lawref" / "embeddings" / "cache.sqlite3"
    target = data_dir / "cache.sqlite3"
    if not target.exists():
        shutil.copyfile(seed, target)
        return
    with sqlite3.connect(target) as db:
        db.execute("ATTACH ? AS seed", (f"file:{seed}?mode=ro",))
        db.execute("INSERT OR IGNORE INTO embeddings SELECT * FROM seed.embeddings")
        db.execute("INSERT OR IGNORE INTO tokens SELECT * FROM seed.tokens")


def raw_signals(kb: KnowledgeBase, questions: list[str]) -> list[dict[str, float]]:
    """Best passage and best sentence cosine of each question, unmapped, as the gate would read them."""
    pipeline = make_pipeline(kb)
    snapshot = kb.retriever.snapshot
    out = []
    for question in questions:
        found = asyncio.run(pipeline.finder.find(question, None, snapshot.version))
        top = found.hits[:5]
        meaning = IndexedMeaning(pipeline.finder.vectors, snapshot.version, snapshot)
        evidence = gather_evidence(question, [h.chunk for h in top], snapshot.lexical.idf,
                                   meaning.similarity(question),
                                   translated=meaning.translated(question, detect_language(question)))
        out.append({"dense": max((h.scores.get("dense", 0.0) for h in top), default=0.0),
                    "sentence": evidence.signals["sentence"]})
    return out


def median(values: list[dict[str, float]], level: str) -> float:
    return round(statistics.median(v[level] for v in values), 4)


def line(cross: tuple[float, float], same: tuple[float, float]) -> tuple[float, float]:
    """a, b of the map taking the cross-language anchors (unrelated, answerable) to the same-language ones."""
    (cu, ca), (su, sa) = cross, same
    a = (sa - su) / (ca - cu)
    return round(a, 4), round(su - a * cu, 4)


PAIR_DATA = {
    "zh>en": "squad2/questions-zh (answerable) and lawref questions (unrelated) against squad2/docs",
    "en>en": "squad2 answerable and lawref/questions-en (unrelated) against squad2/docs",
    "en>zh": ("lawref/questions-en (answerable) and squad2 questions (unrelated) against all of lawref, measured "
              "partly against the translated question"),
    "zh>zh": "lawref questions (answerable) and squad2/questions-zh (unrelated) against all of lawref",
}


def calibration_updates(results: dict) -> dict[tuple[str, ...], object]:
    """The anchors of rag/judging/calibration.json these results set: per language pair and level, the
    medians of the unrelated and the answerable questions' best cosine, with what they were measured on."""
    updates: dict[tuple[str, ...], object] = {}
    for pair, levels in results["anchors_unrelated_answerable"].items():
        counts = results.get("questions", {}).get(pair, {})
        data = f"{PAIR_DATA.get(pair, pair)}; questions: {json.dumps(counts)}"
        updates[("scales", "anchors", pair)] = {
            **{level: list(levels[level]) for level in LEVELS},
            "fitted": fitted("benchmarks/calibrate_pairs.py", data, "benchmarks/results/calibrate_pairs.json"),
        }
    return updates


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--write", action="store_true", help="write the anchors into rag/judging/calibration.json")
    args = parser.parse_args()
    rag.judging.scales.ANCHORS = {}  # measure the raw cosines
    seed_work_cache(args.data_dir)
    settings = Settings(data_dir=args.data_dir, _env_file=None)
    kbs = {}
    for name in ("squad2", "lawref"):
        kbs[name] = KnowledgeBase.for_dataset(seeded_settings(settings, DATASETS / name), DATASETS / name, [])
        kbs[name].refresh([DATASETS / name / "docs"], [])
    squad_en = [r["question"] for r in rows(DATASETS / "squad2" / "questions.jsonl") if r["answerable"]]
    squad_zh = [r["question"] for r in rows(DATASETS / "squad2" / "questions-zh.jsonl")]
    law_zh = [r["question"] for r in rows(DATASETS / "lawref" / "questions.jsonl")]
    law_en = [r["question"] for r in rows(DATASETS / "lawref" / "questions-en.jsonl")]
    measured = {
        "zh>en": {"answerable": raw_signals(kbs["squad2"], sample(squad_zh)),
                  "unrelated": raw_signals(kbs["squad2"], sample(law_zh))},
        "en>en": {"answerable": raw_signals(kbs["squad2"], sample(squad_en)),
                  "unrelated": raw_signals(kbs["squad2"], sample(law_en))},
        "en>zh": {"answerable": raw_signals(kbs["lawref"], sample(law_en)),
                  "unrelated": raw_signals(kbs["lawref"], sample(squad_en))},
        "zh>zh": {"answerable": raw_signals(kbs["lawref"], sample(law_zh)),
                  "unrelated": raw_signals(kbs["lawref"], sample(squad_zh))},
    }
    anchors = {pair: {level: (median(m["unrelated"], level), median(m["answerable"], level)) for level in LEVELS}
               for pair, m in measured.items()}
    maps = {cross: {level: line(anchors[cross][level], anchors[same][level]) for level in LEVELS}
            for cross, same in (("zh>en", "en>en"), ("en>zh", "zh>zh"))}
    results = {"anchors_unrelated_answerable": anchors, "maps": maps,
               "questions": {p: {k: len(v) for k, v in m.items()} for p, m in measured.items()}}
    print(json.dumps(results, indent=1), flush=True)
    save("calibrate_pairs", results)
    if args.write:
        written = calibration.write(calibration_updates(results))
        print(f"wrote {written.source} (version {written.version})", flush=True)


if __name__ == "__main__":
    main()
