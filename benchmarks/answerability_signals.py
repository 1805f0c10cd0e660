"""Which signals tell squad2's unanswerable questions from its answerable ones (issue 18's aim: 40 % of them
refused at 5 % false refusals).

    .venv/bin/python benchmarks/answerability_signals.py --data-dir DATA_DIR [--limit N]

Every question (answerable and unanswerable) goes through the production pipeline of the embedded default;
the signals are read off what its stages found for it: the candidates, the evidence (best sentences) and the
gate's signals. Reported: each signal's ROC AUC alone (1: it separates the two fully; .5: not at all; below
.5: higher for the unanswerable ones), and logistic models over sets of signals, cross-validated leave one
article out — fitted on the other articles, refusing below the score that `--false-refusals` of their
answerable questions fall under, judged on the held-out one. Beside them, what the pipeline as it is
refuses. Written to benchmarks/results/answerability_signals.json.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rag.knowledge_base import KnowledgeBase, make_pipeline  # noqa: E402
from benchmarks.answer_quality import seed_work_cache  # noqa: E402
from benchmarks.calibrate_gate import auc, fit_logistic, threshold_for  # noqa: E402
from benchmarks.common import save, seeded_settings  # noqa: E402
from benchmarks.question_sets import is_answerable, load_set  # noqa: E402
from rag.answering.context import AnswerContext  # noqa: E402
from rag.config import Settings  # noqa: E402
from rag.words.lexical import tokenize  # noqa: E402
from rag.types import Answer  # noqa: E402

NEGATION = re.compile(r"\b(?:not|never|no)\b|n't\b", re.IGNORECASE)
MODELS = {
    "sentence cosine": ("sentence",),
    "the gate's: sentence cosine, missing names": ("sentence", "missing_names"),
    "... and passage share, rarest missing word, negation": ("sentence", "missing_names", "passage_share",
                                                              "rarest_missing", "negation"),
}


def signals(ctx: AnswerContext) -> dict[str, float] | None:
    """The signals of one answered question (None when the evidence holds no sentence)."""
    evidence = ctx.evidence
    if evidence is None or not evidence.units:
        return None
    best, units = evidence.units[0], evidence.units
    weights = ctx.idf(sorted(set(tokenize(ctx.question)))) if ctx.idf else {}
    total = sum(weights.values()) or 1.0
    passage = ctx.sources[best.unit.source]
    in_passage = set(tokenize(f"{passage.context}\n{passage.text}"))
    in_sentence = set(tokenize(best.unit.matched_text))
    missing = [w for t, w in weights.items() if t not in in_passage]
    dense = [h.scores.get("dense", 0.0) for h in ctx.hits[:2]] + [0.0, 0.0]
    gate = ctx.decision.signals if ctx.decision else {}
    return {
        "sentence": gate.get("sentence", best.cosine),
        "sentence_gap": best.cosine - (units[1].cosine if len(units) > 1 else 0.0),
        "passage": dense[0],
        "passage_gap": dense[0] - dense[1],
        "sentence_share": best.coverage,
        "passage_share": 1 - sum(missing) / total,
        "rarest_missing": max(missing, default=0.0),
        "rarest_missing_sentence": max((w for t, w in weights.items() if t not in in_sentence), default=0.0),
        "missing_count": float(len(missing)),
        "missing_names": gate.get("missing_names", 0.0),
        "missing_terms": gate.get("missing_terms", 0.0),
        "negation": 1.0 if NEGATION.search(ctx.question) else 0.0,
        "question_words": float(len(weights)),
    }


async def collect(pipeline, rows: list[dict]) -> list[dict]:
    """Each question's signals, whether it is answerable, its article and whether the pipeline refused it."""
    seen: list[AnswerContext] = []
    judge = pipeline._judge

    def recording(ctx: AnswerContext) -> None:  # the pipeline's own stage, its context kept
        judge(ctx)
        seen.append(ctx)

    pipeline._judge = recording
    out = []
    for n, row in enumerate(rows, 1):
        seen.clear()
        final = None
        async for item in pipeline.answer(row["question"]):
            final = item if isinstance(item, Answer) else final
        found = signals(seen[0]) if seen else None
        if found is not None:
            out.append({"answerable": is_answerable(row), "article": row.get("context_file", ""),
                        "refused": final.refused, **found})
        if n % 500 == 0:
            print(f"  {n}/{len(rows)}", flush=True)
    return out


def cross_validated(x: np.ndarray, answerable: np.ndarray, articles: np.ndarray, budget: float) -> dict:
    """Fit on all articles but one, refuse below the threshold set there, count on the one left out."""
    y = answerable.astype(float)
    refused = wrongly = 0
    for article in sorted(set(articles)):
        train, test = articles != article, articles == article
        weights, bias = fit_logistic(x[train], y[train])
        below = x[test] @ weights + bias < threshold_for(x[train] @ weights + bias, y[train], budget)
        refused += int((below & ~answerable[test]).sum())
        wrongly += int((below & answerable[test]).sum())
    return {"unanswerable_refused": round(float(refused / (~answerable).sum()), 4),
            "false_refusals": round(float(wrongly / answerable.sum()), 4)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--limit", type=int, default=0, help="at most N answerable and N unanswerable")
    parser.add_argument("--false-refusals", type=float, default=0.05)
    args = parser.parse_args()
    settings = Settings(data_dir=args.data_dir, _env_file=None)
    seed_work_cache(args.data_dir)
    part = load_set("squad2", args.limit).parts[0]
    kb = KnowledgeBase.for_dataset(seeded_settings(settings, part.tag_dir), part.tag_dir, list(part.exclude))
    kb.refresh([part.docs], list(part.exclude))
    rows = asyncio.run(collect(make_pipeline(kb), part.rows))
    names = [k for k in rows[0] if k not in ("answerable", "article", "refused")]
    x = np.array([[r[k] for k in names] for r in rows])
    answerable = np.array([r["answerable"] for r in rows])
    articles = np.array([r["article"] for r in rows])
    aucs = {k: round(auc(x[:, j], answerable.astype(float)), 3) for j, k in enumerate(names)}
    models = {label: cross_validated(x[:, [names.index(k) for k in cols]], answerable, articles,
                                     args.false_refusals)
              for label, cols in (*MODELS.items(), (f"all {len(names)} signals", tuple(names)))}
    refused = np.array([r["refused"] for r in rows])
    pipeline = {"unanswerable_refused": round(float((refused & ~answerable).sum() / (~answerable).sum()), 4),
                "false_refusals": round(float((refused & answerable).sum() / answerable.sum()), 4)}
    negated = np.array([r["negation"] > 0 for r in rows])
    results = {"questions": len(rows), "answerable": int(answerable.sum()), "auc": aucs, "models": models,
               "pipeline": pipeline,
               "negation": {"unanswerable": int((negated & ~answerable).sum()),
                            "unanswerable_refused": int((negated & ~answerable & refused).sum()),
                            "answerable": int((negated & answerable).sum()),
                            "answerable_refused": int((negated & answerable & refused).sum())}}
    for k, v in sorted(aucs.items(), key=lambda item: -abs(item[1] - 0.5)):
        print(f"{k:24s} AUC {v:.3f}")
    for label, figures in [*models.items(), ("the pipeline as it is", pipeline)]:
        print(f"{label}: {figures}")
    save("answerability_signals", results)


if __name__ == "__main__":
    main()
