"""Quality of the embedded default's extractive answers on real questions.

    .venv/bin/python benchmarks/answer_quality.py --data-dir DATA_DIR [--sets squad2,lawref] [--limit N]
        [--gate default|off] [--answerable-only] [--name answer_quality]

Sets (benchmarks/question_sets.py): squad2, squad2-zh, lawref, lawref-en, lawref-en-more, handbook,
handbook-other, squad2-other, handbuch, trilingual, handbook-chat (and the -orig sets), and the held-out
corpora of benchmarks/corpora/ (clef-handbook, 18f-travel-leave, apollo-zh, tidb-dashboard-zh,
pagerduty-incident, dolphinscheduler-contribute-zh: run benchmarks/corpora.py first). Per set, of the
answerable questions: recall@5 and recall@10 of the gold among the candidates the answer is made from (squad2
and lawref: the hit rule of ../shared/datasets/README.md; handbook: a passage of the gold file), the share of
answers that are right — squad2, squad2-zh, handbook: the quoted text contains one of the gold `answers`
strings (case and spacing ignored); lawref, lawref-en: the citations include the gold article —, the share
whose first quote alone is right (the excerpt a reader meets first, and its citation), the share that would be
right had each quote been the whole paragraph or list of its passage that holds it (a paragraph-level
citation; with the quotes' length each way), the share whose citations name the gold document (every gold
document, for a multi-document question; `partly_correct` counts those of its answers that hold one part), how
many sentences were quoted, how often the answer was a refusal (a false refusal), how many opened with the
near-miss banner ("The knowledge base does not mention …": on an answerable question, a false banner) and the
time to produce it; on the held-out corpora also, of every answer given, how many quote markup or code and how
many introduce a quote as from a document in another language than the corpus's (benchmarks/quote_form.py).
Where a set has unanswerable questions (squad2's; lawref's refusal.jsonl, answered from lawref without the
files of refusal-exclude.txt; the handbook's answerable=false rows), the share of them refused. With
`--gate off` every question is answered (the evidence gate never refuses), which measures the extractive
selection alone; `default` runs the gate as configured, which is what a user gets.

The work cache of DATA_DIR is seeded from ../shared/datasets/lawref/embeddings/ when it has none (a copy), so
all of lawref indexes in about a minute. One JSON line per question, with the answer's text, goes to
DATA_DIR/NAME-SET.jsonl.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import shutil
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rag.knowledge_base import KnowledgeBase, make_pipeline  # noqa: E402
from benchmarks.common import DATASETS, save, seeded_settings  # noqa: E402
from benchmarks.question_sets import (CORPORA, QuestionSet, excerpts, first_quote, is_answerable, load_set,  # noqa: E402
                                      paragraphs, quoting)
from benchmarks.quote_form import mislabelled, quotes_markup  # noqa: E402
from rag.config import Settings  # noqa: E402
from rag.words.text import sentence_spans  # noqa: E402
from rag.types import Answer  # noqa: E402

SEED_CACHE = DATASETS / "lawref" / "embeddings" / "cache.sqlite3"
RECALL_AT = (5, 10)


def quoted_sentences(answer: Answer) -> int:
    """Full sentences quoted (a table row counts as one; header and separator lines do not count)."""
    separator = re.compile(r"\|?[\s:|-]+\|?")
    lines = [re.sub(r"\[\d+\]", "", line[1:]).replace(" … ", " ").strip()
             for line in answer.text.splitlines() if line.startswith(">")]
    count = 0
    for n, body in enumerate(lines):
        header = n + 1 < len(lines) and separator.fullmatch(lines[n + 1]) is not None
        if not body or separator.fullmatch(body) or header:
            continue
        count += 1 if body.startswith("|") else len(sentence_spans(body, clauses=False))
    return count


def cites_gold(row: dict, answer: Answer) -> bool:
    """The citations name the gold document: one of the row's gold files, or every one of them for a question
    that needs more than one document (kind "multi-document")."""
    gold = {g["file"] for g in row.get("gold", [])} | ({row["gold_file"]} if row.get("gold_file") else set())
    cited = {c.chunk.file for c in answer.citations}
    return gold <= cited if row.get("kind") == "multi-document" else bool(gold & cited)


async def answer_all(pipeline, rows: list[dict], qset: QuestionSet, docs: Path) -> list[dict]:
    corpus = CORPORA.get(qset.name)  # a held-out corpus: the form of its quotes is counted too
    out = []
    for n, row in enumerate(rows, 1):
        began = time.perf_counter()
        final = None
        async for item in pipeline.answer(row["question"]):
            if isinstance(item, Answer):
                final = item
        took = (time.perf_counter() - began) * 1000
        answerable = is_answerable(row)
        answered = answerable and not final.refused
        widened = paragraphs(final)  # each quote as its passage's whole paragraph (or list)
        # The candidates the answer was made from (served from the pipeline's cache: not timed).
        found = await pipeline.finder.find(row["question"], final.rewritten_query, final.index_version)
        top = found.hits[: max(RECALL_AT)]
        rank = next((k for k, hit in enumerate(top, 1) if qset.gold_hit(row, hit.chunk)), None)
        out.append({"id": row["id"], "question": row["question"], "answerable": answerable,
                    **({"kind": row["kind"]} if "kind" in row else {}),
                    "refused": final.refused, "refusal_reason": final.refusal_reason,
                    "near_miss": bool(final.near_miss) and not final.refused,
                    "correct": answered and qset.judge(row, final),
                    "first_correct": answered and qset.judge(row, first_quote(final)),
                    "paragraph_correct": answered and qset.judge(row, quoting(final, widened)),
                    "quoted_chars": sum(len(text) for text, _ in excerpts(final)),
                    "paragraph_chars": sum(map(len, widened)),
                    "cites_gold": answered and cites_gold(row, final),
                    # A question asking for more than one thing: one of its parts answered
                    **({"partly": answered and qset.judge({**row, "answers_all": []}, final)}
                       if row.get("answers_all") else {}),
                    "gold_rank": rank if answerable else None,
                    "sentences": 0 if final.refused else quoted_sentences(final), "ms": round(took, 1),
                    "cited": sorted({c.chunk.file for c in final.citations}), "answer": final.text,
                    "gate": final.gate})
        if corpus is not None and not final.refused:
            out[-1]["quotes_markup"] = quotes_markup(final.text, out[-1]["cited"], docs)
            out[-1]["mislabelled_language"] = mislabelled(final.text, corpus.lang)
        if n % 100 == 0:
            done = sum(r["correct"] for r in out) / max(sum(r["answerable"] for r in out), 1)
            print(f"  {n}/{len(rows)} correct so far {done:.3f}", flush=True)
    return out


def summarise(rows: list[dict]) -> dict:
    """Answerable rows: the figures of earlier runs (same keys) plus recall and false refusals."""
    answered = [r for r in rows if not r["refused"]]
    n = max(len(rows), 1)
    return {
        "questions": len(rows),
        **{f"recall@{k}": round(sum(r["gold_rank"] is not None and r["gold_rank"] <= k for r in rows) / n, 4)
           for k in RECALL_AT},
        "correct": round(sum(r["correct"] for r in rows) / n, 4),
        "correct_when_answered": round(sum(r["correct"] for r in answered) / max(len(answered), 1), 4),
        # ... by the first quote alone: what the reader meets first answers the question
        "first_quote_correct": round(sum(r.get("first_correct", False) for r in rows) / n, 4),
        "cites_gold": round(sum(r.get("cites_gold", False) for r in rows) / n, 4),
        # ... had each quote been its whole paragraph or list (a paragraph-level citation), and how long the
        # quotes are each way (characters, median of the answers given)
        "paragraph_correct": round(sum(r.get("paragraph_correct", False) for r in rows) / n, 4),
        "quoted_chars_p50": statistics.median([r.get("quoted_chars", 0) for r in answered] or [0]),
        "paragraph_chars_p50": statistics.median([r.get("paragraph_chars", 0) for r in answered] or [0]),
        **({"partly_correct": sum(r["partly"] for r in rows if "partly" in r)}
           if any("partly" in r for r in rows) else {}),
        "refused": round(1 - len(answered) / n, 4),
        "false_refusals": len(rows) - len(answered),
        "near_miss_notes": sum(r.get("near_miss", False) for r in rows),  # on answerable questions: false alarms
        "sentences_mean": round(statistics.mean([r["sentences"] for r in answered] or [0]), 3),
        "sentences_max": max([r["sentences"] for r in answered] or [0]),
        "ms_p50": round(statistics.median([r["ms"] for r in rows] or [0]), 1),
    }


def summarise_unanswerable(rows: list[dict]) -> dict:
    """Refused, or answered with the near-miss warning (what the question asks about is in no passage)."""
    refused = sum(r["refused"] for r in rows)
    near = sum(r.get("near_miss", False) for r in rows)
    n = max(len(rows), 1)
    return {"questions": len(rows), "refused": round(refused / n, 4), "refusals": refused,
            "near_miss": round(near / n, 4), "refused_or_near_miss": round((refused + near) / n, 4),
            "ms_p50": round(statistics.median([r["ms"] for r in rows] or [0]), 1)}


def report(judged: list[dict]) -> dict:
    answerable = [r for r in judged if r["answerable"]]
    unanswerable = [r for r in judged if not r["answerable"]]
    out = summarise(answerable)
    if unanswerable:
        out["unanswerable"] = summarise_unanswerable(unanswerable)
    if any("quotes_markup" in r for r in judged):  # of every answer given, answerable or not
        out["quotes_markup"] = sum(r.get("quotes_markup", False) for r in judged)
        out["mislabelled_language"] = sum(r.get("mislabelled_language", False) for r in judged)
    kinds = sorted({r["kind"] for r in judged if "kind" in r})
    if kinds:
        out["by_kind"] = {}
        for kind in kinds:
            rows = [r for r in judged if r.get("kind") == kind]
            done = [r for r in rows if r["answerable"]]
            brief = ("questions", "recall@5", "recall@10", "correct", "cites_gold", "partly_correct",
                     "false_refusals", "near_miss_notes")
            out["by_kind"][kind] = ({k: v for k, v in summarise(done).items() if k in brief}
                                    if done else summarise_unanswerable(rows))
    return out


def seed_work_cache(data_dir: Path) -> None:
    """The shared precomputed vectors of lawref and squad2, copied (never the original) if none is there."""
    target = data_dir / "cache.sqlite3"
    if not target.exists() and SEED_CACHE.exists():
        data_dir.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(SEED_CACHE, target)
        print(f"seeded the work cache from {SEED_CACHE}", flush=True)


def run_set(settings: Settings, qset: QuestionSet, pipelines: dict) -> list[dict]:
    judged: list[dict] = []
    for part in qset.parts:
        key = (str(part.docs), part.exclude, part.also)
        if key not in pipelines:  # each index once per run (squad2-zh reuses squad2's, lawref-en lawref's)
            kb = KnowledgeBase.for_dataset(seeded_settings(settings, part.tag_dir), part.tag_dir, list(part.exclude))
            began = time.perf_counter()
            built = kb.refresh([part.docs, *part.also], list(part.exclude))
            took = time.perf_counter() - began
            print(f"  index {kb.index_dir.name}: {built.chunks} chunks in {took:.0f} s", flush=True)
            pipelines[key] = make_pipeline(kb)
        print(f"{qset.name}: {sum(map(is_answerable, part.rows))} answerable, "
              f"{sum(not is_answerable(r) for r in part.rows)} unanswerable questions", flush=True)
        judged += asyncio.run(answer_all(pipelines[key], part.rows, qset, part.docs))
    return judged


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--sets", default="squad2,lawref")
    parser.add_argument("--limit", type=int, default=0,
                        help="at most N answerable (and N unanswerable) questions per set")
    parser.add_argument("--gate", choices=("default", "off"), default="off")
    parser.add_argument("--answerable-only", action="store_true", help="skip the unanswerable questions")
    parser.add_argument("--name", default="answer_quality")
    args = parser.parse_args()
    overrides = {"gate_threshold": 0.0} if args.gate == "off" else {}
    settings = Settings(data_dir=args.data_dir, _env_file=None, **overrides)
    seed_work_cache(args.data_dir)
    results: dict[str, object] = {"gate": args.gate, "limit": args.limit, "sets": {}}
    pipelines: dict = {}
    for name in args.sets.split(","):
        qset = load_set(name, args.limit, unanswerable=not args.answerable_only)
        judged = run_set(settings, qset, pipelines)
        (args.data_dir / f"{args.name}-{name}.jsonl").write_text(
            "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in judged), encoding="utf-8")
        results["sets"][name] = report(judged)
        print(name, json.dumps(results["sets"][name], ensure_ascii=False), flush=True)
    save(args.name, results)


if __name__ == "__main__":
    main()
