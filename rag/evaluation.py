"""Retrieval evaluation on the `../shared/datasets` layout: recall@k and MRR@10 under its hit rule."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rag.parsing.markup import readable
from rag.types import Hit

_WHITESPACE = re.compile(r"\s+")
PREFIX_CHARS = 40
RECALL_AT = (1, 5, 10, 100)


@dataclass(frozen=True)
class Gold:
    file: str
    text: str


@dataclass(frozen=True)
class Question:
    id: str
    question: str
    answerable: bool
    gold: tuple[Gold, ...]
    lang: str = ""
    negatives: tuple[Gold, ...] = ()  # passages known to be wrong for this question (from feedback)


def load_questions(path: Path) -> list[Question]:
    questions = []
    with open(path, encoding="utf-8") as lines:
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                gold = tuple(Gold(g["file"], g["text"]) for g in row.get("gold", []))
                negatives = tuple(Gold(g["file"], g["text"]) for g in row.get("negatives", []))
                questions.append(
                    Question(str(row["id"]), row["question"], bool(row.get("answerable", bool(gold))), gold,
                             row.get("lang", ""), negatives)
                )
            except (KeyError, TypeError, json.JSONDecodeError) as exc:
                raise ValueError(f"{path}:{number}: not a question row ({exc})") from None
    return questions


def _squash(text: str) -> str:
    """The text as compared: as it reads (a gold passage copied from a page's source may hold a template
    directive or an entity; the passages read hold none: rag.parsing.markup), without spaces."""
    return _WHITESPACE.sub("", readable(text))


def is_hit(file: str, text: str, gold: Gold) -> bool:
    """Same file, and one text contains the other's first 40 non-whitespace characters."""
    if file != gold.file:
        return False
    chunk, target = _squash(text), _squash(gold.text)
    return target[:PREFIX_CHARS] in chunk or chunk[:PREFIX_CHARS] in target


def first_hit_rank(hits: list[Hit], gold: Iterable[Gold]) -> int | None:
    gold = list(gold)
    for rank, hit in enumerate(hits, start=1):
        if any(is_hit(hit.chunk.file, hit.chunk.text, g) for g in gold):
            return rank
    return None


@dataclass
class Metrics:
    questions: int = 0
    answerable: int = 0
    recall: dict[int, float] = field(default_factory=dict)
    mrr_at_10: float = 0.0
    # With answers: how often the system said "not in the knowledge base".
    unanswerable: int = 0
    refusal_rate: float | None = None  # share of unanswerable questions refused (higher is better)
    false_refusal_rate: float | None = None  # share of answerable questions refused (lower is better)
    # Questions with known wrong passages: the share that still gets one in the top 5 (lower is better).
    with_negatives: int = 0
    negative_at_5: float | None = None

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "questions": self.questions,
            "answerable": self.answerable,
            **{f"recall@{k}": round(v, 4) for k, v in self.recall.items()},
            "mrr@10": round(self.mrr_at_10, 4),
        }
        if self.negative_at_5 is not None:
            data["with_negatives"] = self.with_negatives
            data["negative@5"] = round(self.negative_at_5, 4)
        if self.refusal_rate is not None or self.false_refusal_rate is not None:
            data["unanswerable"] = self.unanswerable
            data["refusal_rate"] = None if self.refusal_rate is None else round(self.refusal_rate, 4)
            data["false_refusal_rate"] = None if self.false_refusal_rate is None else round(self.false_refusal_rate, 4)
        return data


@dataclass(frozen=True)
class AnswerOutcome:
    refused: bool
    text: str


def compute_metrics(first_ranks: list[int | None], total_questions: int, ks: Iterable[int] = RECALL_AT) -> Metrics:
    """`first_ranks` holds one entry per answerable question (None = no hit retrieved)."""
    n = len(first_ranks)
    metrics = Metrics(questions=total_questions, answerable=n)
    if n == 0:
        return metrics
    metrics.recall = {k: sum(1 for r in first_ranks if r is not None and r <= k) / n for k in ks}
    metrics.mrr_at_10 = sum(1.0 / r for r in first_ranks if r is not None and r <= 10) / n
    return metrics


def result_line(question: Question, hits: list[Hit]) -> dict[str, Any]:
    return {
        "id": question.id,
        "results": [
            {"rank": rank, "file": hit.chunk.file, "text": hit.chunk.text, "score": round(hit.score, 6)}
            for rank, hit in enumerate(hits, start=1)
        ],
    }


def evaluate(
    questions: list[Question],
    search: Callable[[str], list[Hit]],
    out: Path | None = None,
    on_question: Callable[[int], None] | None = None,
    recall_at: Iterable[int] = RECALL_AT,
    answer: Callable[[str], AnswerOutcome] | None = None,
) -> Metrics:
    """Run every question through `search` (and `answer`); write one JSON line per question to `out`."""
    first_ranks: list[int | None] = []
    negatives_in_top5: list[bool] = []
    refused = {True: 0, False: 0}  # by answerability
    handle = open(out, "w", encoding="utf-8") if out else None
    try:
        for i, question in enumerate(questions, start=1):
            hits = search(question.question)
            if question.answerable and question.gold:
                first_ranks.append(first_hit_rank(hits, question.gold))
            if question.negatives:
                rank = first_hit_rank(hits, question.negatives)
                negatives_in_top5.append(rank is not None and rank <= 5)
            line = result_line(question, hits)
            if answer is not None:
                outcome = answer(question.question)
                line.update(answerable=question.answerable, refused=outcome.refused, answer=outcome.text)
                refused[question.answerable] += outcome.refused
            if handle:
                handle.write(json.dumps(line, ensure_ascii=False) + "\n")
            if on_question:
                on_question(i)
    finally:
        if handle:
            handle.close()
    metrics = compute_metrics(first_ranks, len(questions), recall_at)
    if negatives_in_top5:
        metrics.with_negatives = len(negatives_in_top5)
        metrics.negative_at_5 = sum(negatives_in_top5) / len(negatives_in_top5)
    if answer is not None:
        answerable = sum(1 for q in questions if q.answerable)
        metrics.unanswerable = len(questions) - answerable
        metrics.refusal_rate = refused[False] / metrics.unanswerable if metrics.unanswerable else None
        metrics.false_refusal_rate = refused[True] / answerable if answerable else None
    return metrics
