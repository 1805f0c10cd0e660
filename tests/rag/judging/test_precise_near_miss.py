""""The knowledge base does not mention …" only where it is so (issue 51, classes 5 and 6), on the sample
handbook (the embedded default, real index and model): no note on an everyday word the handbook says in its
own word, nor on a word that cannot name a topic; a note on a year or a place the question asks about that
the handbook never writes, however well its rules match the rest."""

from __future__ import annotations

import pytest

from rag.judging.extractive import HEADERS, NEAR_MISS
from tests.rag.judging.test_extractive import ask, quotes


@pytest.fixture(scope="module")
def handbook(shared_data_dir, tmp_path_factory):
    from tests.conftest import HANDBOOK, built_index

    return built_index(shared_data_dir, tmp_path_factory, "handbook-precise-near-miss", [HANDBOOK])


@pytest.mark.parametrize("question", ["How long is paternity leave when we have a baby?",
                                      "How many weeks off do new dads get?"])
def test_an_everyday_word_the_handbook_says_in_its_own_word_is_no_near_miss(handbook, question):
    """The benefits say "parents" and "child"; the model reads "dads" as "parents" and "baby" as "child" (the
    two words' cosine, each embedded alone, .93-.94). "The knowledge base does not mention "baby"" opened the
    rule that answers."""
    answer = ask(handbook, question)
    assert answer.text.splitlines()[0] == HEADERS["en"], answer.text
    assert "20 weeks of fully paid maternity leave" in quotes(answer)[0]


def test_a_word_that_names_no_topic_is_no_near_miss(handbook):
    """那边 ("over there") is a pronoun to jieba's tagger, a word no handbook needs to write:
    "知识库中没有提到“那边”" opened the sick-leave rule that answers."""
    answer = ask(handbook, "病假证明交到那边？")
    assert answer.text.splitlines()[0] == HEADERS["zh"], answer.text
    assert "病假证明" in quotes(answer)[0]


@pytest.mark.parametrize("question, language, term", [
    ("Is Christmas a holiday in Berlin?", "en", '"Berlin"'),
    ("What are the public holidays in 2027?", "en", '"2027"'),
    ("2027年春节放几天假？", "zh", "“2027”"),
])
def test_a_place_or_year_the_handbook_never_writes_is_a_near_miss(handbook, question, language, term):
    """The holiday table matches these well — for Shanghai and Lisbon, for 2026 — and was quoted as the
    answer without a word of warning."""
    answer = ask(handbook, question)
    first_line = answer.text.splitlines()[0]
    assert answer.refused or first_line == NEAR_MISS[language].format(terms=term), answer.text


@pytest.mark.parametrize("question", ["Is Christmas a holiday in Shanghai?", "2026年春节放几天假？"])
def test_a_place_or_year_the_handbook_writes_is_no_near_miss(handbook, question):
    answer = ask(handbook, question)
    assert not answer.refused, answer.refusal_reason
    assert answer.text.splitlines()[0] in HEADERS.values(), answer.text


@pytest.mark.parametrize("question, language, quoted", [
    ("My wife is pregnant with twins. How many weeks of leave do I get when the baby comes?", "en", "weeks"),
    ("We just moved house and my commute is longer now. Can I work from home?", "en", "home"),
    ("我老婆怀孕了。陪产假有几天？", "zh", "陪产假"),
])
def test_a_word_that_only_tells_the_askers_situation_is_no_near_miss(handbook, question, language, quoted):
    """The sentence before the question tells the asker's situation; what is asked is the question sentence's.
    "The knowledge base does not mention "wife", "pregnant", "twins"" opened the leave rule that answers."""
    answer = ask(handbook, question)
    assert answer.text.splitlines()[0] == HEADERS[language], answer.text
    assert quoted in quotes(answer)[0]


def test_a_place_told_with_the_situation_is_still_a_near_miss(handbook):
    """A name in that sentence scopes the question: the handbook's holidays are Shanghai's and Lisbon's."""
    answer = ask(handbook, "I work from our Berlin office. Is Christmas a holiday there?")
    assert answer.refused or answer.text.splitlines()[0] == NEAR_MISS["en"].format(terms='"Berlin"'), answer.text


@pytest.fixture(scope="module")
def engineering_handbook(shared_data_dir, tmp_path_factory):
    """A small English handbook: hiring and hack weeks, in its own words."""
    from tests.conftest import built_index

    folder = tmp_path_factory.mktemp("engineering-handbook")
    (folder / "hiring.md").write_text(
        "# Hiring\n\n## Applications\n\nWhen a candidate sends us a resume, we reply within five business days, "
        "whether or not we invite them to interview.\n", encoding="utf-8")
    (folder / "hack-weeks.md").write_text(
        "# Hack Weeks\n\nTwice a year the whole team stops regular work for a Hack Week. Project teams have at "
        "most four people, and every team demos its project on the Friday.\n", encoding="utf-8")
    return built_index(shared_data_dir, tmp_path_factory, "engineering-handbook-index", [folder])


@pytest.mark.parametrize("question, quoted", [
    ("简历投了以后几天内回复？", "five business days"),  # the dictionary's "résumé"
    ("黑客周一个项目最多几个人？", "at most four people"),  # its "hacker", the handbook's "Hack Week"
])
def test_a_word_the_handbook_writes_in_a_form_of_its_translation_is_no_near_miss(engineering_handbook, question,
                                                                                    quoted):
    answer = ask(engineering_handbook, question)
    assert answer.text.splitlines()[0] == HEADERS["zh"], answer.text
    assert quoted in answer.text
