"""What admins review: the most down-voted answers and the most flagged passages of a period."""

from __future__ import annotations

from collections import Counter
from typing import Any

from rag.feedback.adjust import FeedbackAdjuster
from rag.feedback.store import ANSWER, FeedbackStore

DAY = 86400.0


def down_voted_answers(store: FeedbackStore, since: float | None = None, limit: int = 10) -> list[dict[str, Any]]:
    """Answers with the most 👎 (net of 👍), with the reasons and comments people gave."""
    by_answer: dict[str, dict[str, Any]] = {}
    for row in store.export(since):
        if row["target"] != ANSWER:
            continue
        entry = by_answer.setdefault(row["answer_id"], {
            "answer_id": row["answer_id"], "question": row["question"], "answer": row["answer"],
            "channel": row["channel"], "platform": row["platform"], "down_votes": 0, "up_votes": 0,
            "reasons": Counter(), "comments": [], "last_vote": 0.0})
        entry["down_votes" if row["value"] < 0 else "up_votes"] += 1
        entry["last_vote"] = max(entry["last_vote"], row["updated"])
        if row["value"] < 0 and row["reason"]:
            entry["reasons"][row["reason"]] += 1
        if row["value"] < 0 and row["comment"]:
            entry["comments"].append(row["comment"])
    ranked = sorted((e for e in by_answer.values() if e["down_votes"] > e["up_votes"]),
                    key=lambda e: (-(e["down_votes"] - e["up_votes"]), -e["last_vote"]))
    return [{**e, "reasons": dict(e["reasons"])} for e in ranked[:limit]]


def summary(store: FeedbackStore, adjuster: FeedbackAdjuster, limit: int = 10, since: float | None = None,
            live=None) -> dict[str, list[dict[str, Any]]]:
    """Down-voted answers, flagged passages (with what their votes do) and the documents they come from."""
    passages = [a for a in adjuster.adjustments(live, since) if a.flaggers]
    documents = Counter()
    for adjustment in passages:
        documents[adjustment.cited.file] += len(adjustment.flaggers)
    return {
        "answers": down_voted_answers(store, since, limit),
        "passages": [a.to_dict() for a in passages[:limit]],
        "documents": [{"file": f, "flags": n} for f, n in documents.most_common(limit)],
    }
