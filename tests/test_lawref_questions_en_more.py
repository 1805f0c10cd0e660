"""lawref-en-more of benchmarks/answer_quality.py: English questions written for this project about lawref's
statutes. Only the questions are kept here; each row's gold is read from the dataset by its id, so a row
that names no answerable lawref question, or an English set that drifts from its originals, fails here."""

from __future__ import annotations

from benchmarks.question_sets import LAWREF_EN_MORE, load_rows, load_set
from rag.words.languages import detect_language


def test_each_question_is_english_and_names_an_answerable_lawref_question():
    written = load_rows(LAWREF_EN_MORE)
    english = load_set("lawref-en-more").parts[0].rows
    originals = load_set("lawref-en-more-orig").parts[0].rows
    assert len(written) == len(english) == len(originals) == 40
    assert len({row["id"] for row in written}) == 40
    for mine, asked, first in zip(written, english, originals):
        assert set(mine) == {"id", "question", "lang"}, mine  # no dataset text copied in
        assert detect_language(asked["question"]) == "en", asked["question"]
        assert asked["id"] == first["id"] + ":en" and asked["question"] == mine["question"]
        assert first["gold"] and asked["gold"] == first["gold"], first["id"]
        assert detect_language(first["question"]) == "zh", first["question"]
