"""How well the citation check catches a marker that names the wrong passage, on real questions.

    .venv/bin/python benchmarks/citation_check.py --data-dir DATA_DIR [--sets squad2,lawref] [--limit N]

For every answerable question whose gold passage is among the 5 passages retrieved for it, an answer
sentence is written two ways, and cited once correctly ([S gold]) and once wrongly ([S other], another
retrieved passage, chosen at random):
  * verbatim: the gold passage's sentence that holds the answer (squad2) or the article's first sentence
    (lawref) — what an extractive or a copying model writes;
  * short answer (squad2 only): the question turned into a statement with the gold answer, e.g. "What
    ruined Richard's plans to reach Acre — a storm." — close to what a model writes in its own words.
The production code (MarkerRewriter + finalize with the lexical support scorer) then reports each
sentence's outcome. Correct markers should stay on a gold passage (neighbouring chunks overlap, so
another chunk holding the same article or paragraph counts); wrong ones be moved there or flagged.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import re
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rag.knowledge_base import KnowledgeBase  # noqa: E402
from benchmarks.common import DATASETS, save, seeded_settings  # noqa: E402
from cache import MemoryCache  # noqa: E402
from rag.answering.candidates import CandidateFinder  # noqa: E402
from rag.answering.citations import MarkerRewriter, finalize  # noqa: E402
from rag.config import Settings  # noqa: E402
from rag.evaluation import Gold, is_hit  # noqa: E402
from rag.judging.support import SupportScorer  # noqa: E402
from rag.words.text import sentence_spans  # noqa: E402

KEPT = {"supported", "partly supported", "unchecked"}


def sentence_with(text: str, needle: str) -> str | None:
    for start, end in sentence_spans(text, clauses=False):
        if needle.lower() in text[start:end].lower():
            return text[start:end].strip()
    return None


def cases(name: str, row: dict) -> list[tuple[str, str]]:
    """(kind, sentence) pairs for one question."""
    gold = [Gold(g["file"], g["text"]) for g in row["gold"]]
    text = gold[0].text
    if name == "squad2":
        answer = next((a for a in row.get("answers", []) if a.strip()), "")
        verbatim = sentence_with(text, answer) if answer else None
        short = f"{row['question'].strip().rstrip('?？ ')} — {answer}." if answer else None
        return [(k, s) for k, s in (("verbatim", verbatim), ("short answer", short)) if s]
    first = sentence_spans(text, clauses=False)
    return [("verbatim", text[first[0][0]:first[0][1]].strip())] if first else []


def run(name: str, kb: KnowledgeBase, rows: list[dict], seed: int = 7) -> dict:
    finder = CandidateFinder(kb.retriever, MemoryCache(), None, depth=50)
    snapshot = kb.retriever.snapshot
    scorer = SupportScorer(snapshot.lexical.idf)
    rng = random.Random(seed)
    tally: dict[str, Counter] = {}
    for row in rows:
        found = asyncio.run(finder.find(row["question"], None, snapshot.version))
        sources = [h.chunk for h in found.hits[:5]]
        gold = [Gold(g["file"], g["text"]) for g in row["gold"]]
        at = next((n for n, c in enumerate(sources) if any(is_hit(c.file, c.text, g) for g in gold)), None)
        if at is None or len(sources) < 2:
            continue
        hits_gold = {n + 1 for n, c in enumerate(sources) if any(is_hit(c.file, c.text, g) for g in gold)}
        others = [n for n in range(len(sources)) if n + 1 not in hits_gold]
        if not others:
            continue
        for kind, sentence in cases(name, row):
            right = _judge(sentence, at + 1, sources, scorer)
            wrong = _judge(sentence, rng.choice(others) + 1, sources, scorer)
            counts = tally.setdefault(kind, Counter())
            counts["cases"] += 1
            counts["correct kept"] += right[0] in KEPT | {"moved"} and right[1] in hits_gold
            counts["correct lost"] += not (right[0] in KEPT | {"moved"} and right[1] in hits_gold)
            counts["wrong moved to gold"] += wrong[0] == "moved" and wrong[1] in hits_gold
            counts["wrong moved elsewhere"] += wrong[0] == "moved" and wrong[1] not in hits_gold
            counts["wrong flagged"] += wrong[0] == "flagged"
            counts["wrong kept"] += wrong[0] in KEPT
    return {kind: {k: (v if k == "cases" else round(v / counts["cases"], 4)) for k, v in counts.items()}
            for kind, counts in tally.items()}


def _judge(sentence: str, cited: int, sources: list, scorer: SupportScorer) -> tuple[str, int | None]:
    """The outcome, and the source number (1-based, as retrieved) the sentence finally cites."""
    rewriter = MarkerRewriter(len(sources))
    text = rewriter.feed(re.sub(r"[.。]\s*$", "", sentence) + f" [S{cited}].") + rewriter.flush()
    check = finalize(text, sources, rewriter.order, scorer=scorer)
    result = check.sentences[0]
    if not result.markers:
        return result.outcome, None
    chunk = check.citations[result.markers[0] - 1].chunk
    return result.outcome, next(n + 1 for n, s in enumerate(sources) if s.id == chunk.id)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--sets", default="squad2,lawref")
    parser.add_argument("--limit", type=int, default=0)
    args = parser.parse_args()
    settings = Settings(data_dir=args.data_dir, _env_file=None)
    results: dict[str, object] = {"sets": {}}
    for name in args.sets.split(","):
        dataset = DATASETS / name
        rows = [json.loads(line) for line in (dataset / "questions.jsonl").read_text(encoding="utf-8").splitlines()
                if line.strip()]
        rows = [r for r in rows if r.get("answerable", True) and r.get("gold")]
        rows = rows[: args.limit] if args.limit else rows
        kb = KnowledgeBase.for_dataset(seeded_settings(settings, dataset), dataset, [])
        kb.refresh([dataset / "docs"], [])
        results["sets"][name] = run(name, kb, rows)
        print(name, json.dumps(results["sets"][name], ensure_ascii=False), flush=True)
    save("citation_check", results)


if __name__ == "__main__":
    main()
