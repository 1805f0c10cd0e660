"""A small, real slice of ../shared/datasets/lawref: a few statutes and the questions they answer."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tests.conftest import LAWREF, read_jsonl

GOLD_FILES = [
    "司法解释/最高人民法院关于审理旅游纠纷案件适用法律若干问题的规定(2020-12-29).md",
    "司法解释/最高人民法院关于审理融资租赁合同纠纷案件适用法律问题的解释(2020-12-29).md",
    "司法解释/最高人民法院、最高人民检察院关于办理盗窃刑事案件适用法律若干问题的解释(2013-04-02).md",
    "司法解释/最高人民法院关于审理城镇房屋租赁合同纠纷案件具体应用法律若干问题的解释(2020-12-29).md",
    "司法解释/最高人民法院、最高人民检察院关于办理诈骗刑事案件具体应用法律若干问题的解释(2011-03-01).md",
    "司法解释/最高人民法院关于审理物业服务纠纷案件适用法律若干问题的解释(2020-12-29).md",
]
DISTRACTORS = [
    "司法解释/最高人民法院关于限制被执行人高消费的若干规定(2010-07-01).md",
    "司法解释/最高人民法院关于审理消费民事公益诉讼案件适用法律若干问题的解释(2020-12-29).md",
]


def make_subset(target: Path) -> Path:
    """Copy the subset to `target` (docs/ + questions.jsonl) and return it."""
    docs = target / "docs"
    for rel in GOLD_FILES + DISTRACTORS:
        dest = docs / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(LAWREF / "docs" / rel, dest)
    keep = set(GOLD_FILES)
    with open(LAWREF / "questions.jsonl", encoding="utf-8") as src, open(target / "questions.jsonl", "w", encoding="utf-8") as out:
        for line in src:
            row = json.loads(line)
            if row["gold"] and all(g["file"] in keep for g in row["gold"]):
                out.write(line)
    return target


# One of the statutes lawref's refusal set leaves out (refusal-exclude.txt). Indexed without it, the
# refusal questions about it have no answer in the subset; with it, their answerable twins (the same
# questions in questions.jsonl, with gold articles in this file) do.
TOURISM = "司法解释/最高人民法院关于审理旅游纠纷案件适用法律若干问题的规定(2020-12-29).md"


def tourism_split(rows: list[dict], refusals: list[dict]) -> tuple[list[dict], list[dict]]:
    """(twins, others) among subset question rows: the answerable twins of lawref's refusal rows about
    TOURISM, and the questions the other statutes answer."""
    refused = {r["id"] for r in refusals}
    twins = [r for r in rows if r["id"] in refused and all(g["file"] == TOURISM for g in r["gold"])]
    others = [r for r in rows if all(g["file"] != TOURISM for g in r["gold"])]
    return twins, others


def write_refusal_questions(target: Path) -> tuple[int, int]:
    """Questions for a subset indexed without TOURISM: lawref's own refusal rows about it (unanswerable)
    and the subset's questions answered by the other statutes. Returns (unanswerable, answerable)."""
    refusals = read_jsonl(LAWREF / "refusal.jsonl")
    twins, others = tourism_split(read_jsonl(target / "questions.jsonl"), refusals)
    twin_ids = {r["id"] for r in twins}
    unanswerable = [r for r in refusals if r["id"] in twin_ids]
    with open(target / "refusal-tourism.jsonl", "w", encoding="utf-8") as out:
        for row in unanswerable + others:
            out.write(json.dumps(row, ensure_ascii=False) + "\n")
    return len(unanswerable), len(others)
