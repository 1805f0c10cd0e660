"""The handbook question set of benchmarks/answer_quality.py: every gold string is in its gold file as the
project parses it (a handbook edit that drops a fact must update the set), and the set holds the kinds it
claims to measure."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest

from rag.parsing.loader import DocumentLoader
from rag.parsing.mineru_worker import MinerUOptions

ROOT = Path(__file__).resolve().parents[1]
HANDBOOK = ROOT / "examples" / "handbook"
QUESTIONS = ROOT / "benchmarks" / "data" / "handbook_questions.jsonl"
KINDS = {"paraphrase", "same-words", "cross-language", "near-miss"}


def rows() -> list[dict]:
    return [json.loads(line) for line in QUESTIONS.read_text(encoding="utf-8").splitlines() if line.strip()]


def squashed(text: str) -> str:
    return re.sub(r"\s+", "", text).lower()


@pytest.fixture(scope="module")
def parsed_text(tmp_path_factory) -> dict[str, str]:
    loader = DocumentLoader(MinerUOptions(home=str(tmp_path_factory.mktemp("mineru-home")), timeout=120))
    try:
        wanted = {r["gold_file"] for r in rows() if r["answerable"]}
        return {name: squashed(" ".join(b.text for b in loader.load(HANDBOOK / name, name,
                                                                    (HANDBOOK / name).read_bytes()).blocks))
                for name in wanted}
    finally:
        loader.close()


def test_every_gold_answer_is_in_its_gold_file(parsed_text):
    missing = [(r["id"], a) for r in rows() if r["answerable"] for a in r["answers"]
               if squashed(a) not in parsed_text[r["gold_file"]]]
    assert not missing


def test_the_set_has_each_kind_and_well_formed_rows():
    questions = rows()
    assert len({r["id"] for r in questions}) == len(questions)
    assert {r["kind"] for r in questions} == KINDS
    for r in questions:
        assert r["lang"] in ("zh", "en")
        assert r["answerable"] == (r["kind"] != "near-miss")
        assert bool(r.get("answers")) == r["answerable"] and ("gold_file" in r) == r["answerable"]
    counts = Counter(r["kind"] for r in questions)
    assert counts["cross-language"] >= 12 and counts["near-miss"] >= 12
    asked = {r["question"] for r in questions}
    assert {"新员工第一天要做什么？", "住酒店一晚最多报多少", "How many days of paternity leave do I get?",
            "Who is the VP of Engineering?"} <= asked


def test_the_first_quote_is_what_a_reader_meets_first():
    """answer_quality's "first quote right" reads the first excerpt and the citation its marker names only."""
    from benchmarks.question_sets import first_quote, handbook_judge
    from rag.types import Answer, Citation
    from tests.rag.answering.test_prompt import chunk

    rule, guide = chunk("第六条 …出租车或网约车…", 1), chunk("Taxis and ride-hailing are reimbursed …", 2)
    text = ("以下是知识库中与问题最相关的原文摘录：\n摘自英文文档《Travel and Expense Policy》：\n"
            "> Taxis and ride-hailing are reimbursed for trips to airports.\n> And stations. [1]\n"
            "> 第六条 …可乘坐出租车或网约车，凭发票实报实销。 [2]")
    answer = Answer("打车能报销吗？", text, [Citation(1, guide), Citation(2, rule)], False, "extractive")
    first = first_quote(answer)
    assert first.text.splitlines() == ["> Taxis and ride-hailing are reimbursed for trips to airports.",
                                       "> And stations. [1]"]
    assert [c.chunk for c in first.citations] == [guide]
    row = {"answers": ["出租车或网约车"]}
    assert handbook_judge(row, answer) and not handbook_judge(row, first)


def test_the_chat_set_wraps_every_handbook_question_and_the_framing_comes_off():
    """benchmarks' handbook-chat: each question in a greeting, preamble or thanks that rag.answering.framing takes off
    whole, leaving the question as written."""
    from benchmarks.question_sets import HANDBOOK_QUESTIONS, load_rows, load_set
    from rag.answering.framing import asked_part

    chat = load_set("handbook-chat").parts[0].rows
    plain = {r["id"]: r["question"] for r in load_rows(HANDBOOK_QUESTIONS)}
    assert sorted(r["id"] for r in chat) == sorted(plain)
    assert all(r["question"] != plain[r["id"]] for r in chat)
    assert [asked_part(r["question"]) for r in chat] == [plain[r["id"]] for r in chat]
