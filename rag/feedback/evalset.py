"""Feedback as an evaluation set in the layout of ../shared/datasets: what people asked, with the passages
they confirmed as gold and the ones they rejected as known negatives.

Gold: the citations of answers voted 👍 and the passages marked "this source helped". Negatives: the
passages flagged "this source is wrong", and the citations of answers voted 👎 for "wrong source". A
passage people disagree on counts where most of their votes put it (a tie: neither).
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from pathlib import Path
from typing import Any

from rag.feedback.store import ANSWER, FeedbackStore
from rag.words.languages import detect_language


def evaluation_rows(store: FeedbackStore) -> list[dict[str, Any]]:
    """One row per distinct question (spacing and case ignored) that got at least one usable vote."""
    score: dict[str, dict[tuple[str, str], int]] = defaultdict(lambda: defaultdict(int))
    asked: dict[str, str] = {}
    votes: dict[str, int] = defaultdict(int)
    for row in store.export():
        key = " ".join(row["question"].split()).lower()
        asked.setdefault(key, row["question"].strip())
        votes[key] += 1
        cited = [(c["file"], c["text"]) for c in row["citations"] if c.get("text")]
        if row["target"] != ANSWER:
            marker = int(row["target"].split(":", 1)[1])
            passages = cited[marker - 1 : marker] if marker <= len(cited) else []
            for passage in passages:
                score[key][passage] += row["value"]
        elif row["value"] > 0:
            for passage in cited:
                score[key][passage] += 1
        elif row["reason"] == "wrong source":
            for passage in cited:
                score[key][passage] -= 1
    rows = []
    for key, passages in score.items():
        gold = [{"file": f, "text": t} for (f, t), s in passages.items() if s > 0]
        negatives = [{"file": f, "text": t} for (f, t), s in passages.items() if s < 0]
        if not gold and not negatives:
            continue
        question = asked[key]
        rows.append({"id": "fb-" + hashlib.sha256(key.encode()).hexdigest()[:12], "question": question,
                     "lang": detect_language(question), "answerable": True, "gold": gold,
                     "negatives": negatives, "votes": votes[key], "source": "feedback"})
    return sorted(rows, key=lambda r: (-r["votes"], r["id"]))


def write_evaluation_set(store: FeedbackStore, out_dir: Path, roots: list[Path] | None = None) -> dict[str, Any]:
    """Write `out_dir/questions.jsonl`; with the indexed `roots`, link them as `out_dir/docs` so that
    `ai-employee eval out_dir` runs as it is. Returns what was written."""
    rows = evaluation_rows(store)
    out_dir.mkdir(parents=True, exist_ok=True)
    with open(out_dir / "questions.jsonl", "w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    docs = out_dir / "docs"
    linked: list[str] = []
    if roots and not docs.exists():
        if len(roots) == 1:  # file names in the index are relative to the one root
            docs.symlink_to(roots[0].resolve(), target_is_directory=True)
        else:  # with several roots they start with each root's name
            docs.mkdir()
            for root in roots:
                (docs / root.name).symlink_to(root.resolve(), target_is_directory=True)
        linked = [str(r) for r in roots]
    return {"questions": len(rows), "with_gold": sum(bool(r["gold"]) for r in rows),
            "with_negatives": sum(bool(r["negatives"]) for r in rows), "path": str(out_dir / "questions.jsonl"),
            "docs_linked_to": linked}
