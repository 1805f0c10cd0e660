"""Workplace shorthand and its plain words (rag.words.jargon)."""

from __future__ import annotations

import pytest

from rag.words.jargon import plain_words, spelled_out


def test_shorthand_has_plain_words_and_other_words_none():
    assert plain_words("PTO") == ("annual leave", "vacation", "holidays")
    assert plain_words("Vacation") == ("annual leave", "leave")
    assert plain_words("bike") == ()


@pytest.mark.parametrize("question, read", [
    ("How much PTO do I get?", "How much PTO (annual leave) do I get?"),
    ("what's the per diem", "what's the per diem (daily allowance)"),
    ("can I WFH on fridays?", "can I WFH (work from home) on fridays?"),
    ("Who is the VP of Engineering?", "Who is the VP (vice president) of Engineering?"),
    ("T&E policy", "T&E (travel and expenses) policy"),
    ("Where can I leave my bike?", "Where can I leave my bike?"),  # no shorthand
    ("HR 的邮箱是什么？", "HR 的邮箱是什么？"),  # a Chinese question is read as it is
    ("wfhx and xpto", "wfhx and xpto"),  # only whole words
])
def test_the_model_reads_shorthand_spelled_out(question, read):
    assert spelled_out(question) == read
