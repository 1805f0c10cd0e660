"""What each answering heuristic is worth on the held-out corpora: every corpus answered with one heuristic
switched off at a time, beside the code as it is.

    .venv/bin/python benchmarks/ablation.py --data-root DIR [--corpora clef-handbook,apollo-zh,...]
        [--variants none,jargon,...] [--limit N] [--name ablation] [--json]

DATA-ROOT/NAME is a data dir per corpus (as benchmarks/answer_quality.py --data-dir uses it: indexed on the
first run, its embeddings kept; copy one you want to keep unchanged). Any set of benchmarks/question_sets.py
can be named (the project's own sets as guard rails: handbook, squad2-zh, …; a symbolic link per name to one
data dir serves several; `--limit N` takes the first N questions of each). A heuristic is switched off by putting
a neutral function in place of the one the answering code calls (in every rag module that imported it), for
the run of that variant only, with a new pipeline (so no answer cached under another variant is served):

    none          the code as it is
    framing       the greeting and thanks around a question are searched too (rag.answering.framing.asked_part)
    jargon        shorthand is not spelled out for the embedded model (rag.words.jargon.spelled_out)
    synonyms      the knowledge base's own words are not added to BM25's query (rag.words.synonyms.expanded)
    sections      a question naming a passage's heading gains nothing for it (rag.judging.sections.named_section)
    negation      a question about what is not so is not led by a sentence that denies (rag.judging.negation)
    answer_kind   the kind of answer asked (a year, a time, a date, code) leads nothing (rag.judging.answer_kind)
    near_miss     no near-miss banner, no near-miss signal for the gate (rag.judging.near_miss.missing_terms)
    other_pool    no passages of the other language joined by meaning (rag.answering.pools.draws, other=0)
    and each ordering step of the sentence evidence (saying_most_first, named_row_first, less_general:
    rag.judging.evidence) and of the quotes (rule_first, said_first, askers_own_first, glossed_first, named_first,
    pointed_to_first, sounding_alike_left_out: rag.judging.extractive), each left out (its input passed on as is)

Per variant and corpus: answers holding the gold (of the answerable questions), answers whose first quote
holds it (what the ordering steps act on), false banners, false
refusals, and the unanswerable questions answered honestly (refused or under the banner); with the corpora
split as BENCHMARKS.md's broad evaluation splits them (choose on clef-handbook and apollo-zh, report on
18f-travel-leave, tidb-dashboard-zh, pagerduty-incident and dolphinscheduler-contribute-zh). Results: benchmarks/results/NAME.json; the table on stdout (or,
with --json, one JSON object).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.answer_quality import report, run_set, seed_work_cache  # noqa: E402
from benchmarks.common import save  # noqa: E402
from benchmarks.question_sets import load_set  # noqa: E402
from rag.config import Settings  # noqa: E402

CHOOSING = ("clef-handbook", "apollo-zh")
HELD_OUT = ("18f-travel-leave", "tidb-dashboard-zh", "pagerduty-incident", "dolphinscheduler-contribute-zh")


def _neutral_draws(language, hits, scores, top_k, vectors, general, other=0):
    return _originals["rag.answering.pools.draws"](language, hits, scores, top_k, vectors, general, other=0)


# variant -> [(module, function, its neutral stand-in)]
VARIANTS: dict[str, list[tuple[str, str, Callable]]] = {
    "none": [],
    "framing": [("rag.answering.framing", "asked_part", lambda message: message.strip())],
    "jargon": [("rag.words.jargon", "spelled_out", lambda text: text)],
    "synonyms": [("rag.words.synonyms", "expanded", lambda question, idf: question)],
    "sections": [("rag.judging.sections", "named_section", lambda asked, heading_path: frozenset())],
    "negation": [("rag.judging.negation", "denial_first", lambda question, language, ranked, *rest, **kw: ranked)],
    "answer_kind": [
        ("rag.judging.answer_kind", "kind_first", lambda question, language, ranked, *rest, **kw: ranked),
        ("rag.judging.answer_kind", "giving_first", lambda question, language, excerpts, *rest, **kw: excerpts),
        ("rag.judging.answer_kind", "unstated_kind", lambda question, language, texts: None),
    ],
    "near_miss": [("rag.judging.near_miss", "missing_terms", lambda *args, **kw: ())],
    "other_pool": [("rag.answering.pools", "draws", _neutral_draws)],
    # the ordering steps of the sentence evidence (rag.judging.evidence) and of the quotes (rag.judging.extractive)
    "saying_most_first": [("rag.judging.evidence", "_saying_most_first", lambda units, languages: units)],
    "named_row_first": [("rag.judging.evidence", "_named_row_first", lambda units, sources: units)],
    "less_general": [("rag.judging.evidence", "_less_general", lambda *args, **kw: None)],
    "rule_first": [("rag.judging.extractive", "_rule_first", lambda evidence, apart: evidence)],
    "said_first": [("rag.judging.extractive", "_said_first", lambda evidence, margin, confirmed, asked: evidence)],
    "askers_own_first": [("rag.judging.extractive", "_askers_own_first", lambda excerpts, *rest: excerpts)],
    "glossed_first": [("rag.judging.extractive", "_glossed_first", lambda excerpts, evidence: excerpts)],
    "named_first": [("rag.judging.extractive", "_named_first", lambda excerpts, evidence, other: excerpts)],
    "pointed_to_first": [("rag.judging.extractive", "_pointed_to_first", lambda excerpts, evidence: excerpts)],
    "sounding_alike_left_out": [("rag.judging.extractive", "_sounding_alike_left_out", lambda excerpts, *rest: excerpts)],
}
_originals: dict[str, Callable] = {}


@contextmanager
def switched_off(variant: str) -> Iterator[None]:
    """The variant's functions replaced by their stand-ins wherever a loaded rag module holds them."""
    import importlib

    replaced: list[tuple[object, str, object]] = []
    for module_name, name, stand_in in VARIANTS[variant]:
        original = getattr(importlib.import_module(module_name), name)
        _originals[f"{module_name}.{name}"] = original
        for module in [m for key, m in list(sys.modules.items()) if key.startswith("rag") and m is not None]:
            for attr, value in list(vars(module).items()):
                if value is original:
                    replaced.append((module, attr, value))
                    setattr(module, attr, stand_in)
    try:
        yield
    finally:
        for module, attr, value in replaced:
            setattr(module, attr, value)


def figures(summary: dict) -> dict:
    """The four figures of one corpus's report."""
    unanswerable = summary.get("unanswerable", {})
    honest = round(unanswerable.get("refused_or_near_miss", 0) * unanswerable.get("questions", 0))
    return {"answerable": summary["questions"], "holds_gold": round(summary["correct"] * summary["questions"]),
            # what a reader meets first: the ordering steps act on it more than on what the quotes hold
            "first_quote": round(summary["first_quote_correct"] * summary["questions"]),
            "false_banners": summary["near_miss_notes"], "false_refusals": summary["false_refusals"],
            "unanswerable": unanswerable.get("questions", 0), "honest": honest}


def run(data_root: Path, corpora: list[str], variants: list[str], limit: int = 0) -> dict:
    from rag.knowledge_base import KnowledgeBase, make_pipeline  # noqa: F401  (loads every rag module first)

    sets = {corpus: load_set(corpus, limit) for corpus in corpora}
    for corpus in corpora:
        seed_work_cache(data_root / corpus)
    results: dict[str, dict] = {}
    for variant in variants:  # a variant on every set before the next: a run cut short still compares
        for corpus, qset in sets.items():
            with switched_off(variant):
                judged = run_set(Settings(data_dir=data_root / corpus, _env_file=None), qset, {})
            results.setdefault(variant, {})[corpus] = figures(report(judged))
            print(f"{variant} {corpus} {json.dumps(results[variant][corpus])}", file=sys.stderr, flush=True)
    return results


def table(results: dict, corpora: list[str]) -> str:
    def cell(row: dict) -> str:
        return (f"{row['holds_gold']}/{row['answerable']} (first {row['first_quote']}) · {row['false_banners']} banners · "
                f"{row['false_refusals']} refused · honest {row['honest']}/{row['unanswerable']}")

    lines = ["| switched off | " + " | ".join(corpora) + " |", "|---" * (len(corpora) + 1) + "|"]
    for variant, by_corpus in results.items():
        lines.append(f"| {variant} | " + " | ".join(cell(by_corpus[c]) for c in corpora if c in by_corpus) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data-root", type=Path, required=True)
    parser.add_argument("--corpora", default=",".join(CHOOSING + HELD_OUT))
    parser.add_argument("--variants", default=",".join(VARIANTS))
    parser.add_argument("--limit", type=int, default=0,
                        help="at most N answerable (and N unanswerable) questions per set (the project's large sets)")
    parser.add_argument("--name", default="ablation")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    corpora, variants = args.corpora.split(","), args.variants.split(",")
    unknown = [v for v in variants if v not in VARIANTS]
    if unknown:
        parser.error(f"unknown variant(s) {', '.join(unknown)}; known: {', '.join(VARIANTS)}")
    results = run(args.data_root, corpora, variants, args.limit)
    save(args.name, {"corpora": corpora, "choosing": CHOOSING, "held_out": HELD_OUT, "results": results})
    print(json.dumps(results) if args.json else table(results, corpora))


if __name__ == "__main__":
    main()
