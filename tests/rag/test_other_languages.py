"""Questions in a language the bilingual dictionary does not know, on the sample handbook (the embedded
default, real index and model): judged by meaning like a question across languages, framed in the asker's
language, never refused or warned about for words that are merely in another language."""

from __future__ import annotations

import pytest

from rag.judging.extractive import FROM_DOCUMENT, HEADERS
from rag.answering.prompt import REFUSALS
from tests.rag.judging.test_extractive import ask, quotes


@pytest.fixture(scope="module")
def handbook(shared_data_dir, tmp_path_factory):
    from tests.conftest import HANDBOOK, built_index

    return built_index(shared_data_dir, tmp_path_factory, "handbook-other-languages", [HANDBOOK])


@pytest.mark.parametrize("question, language, file, title, gold", [
    ("¿Cuántos días de vacaciones tengo al año?", "es", "annual-leave-policy.docx",
     "Annual Leave and Time Off Policy", "26 working days"),
    ("Onde posso estacionar a bicicleta?", "pt", "office-guide.html", "Office and Facilities Guide",
     "Bicycle parking"),
    ("Wie viel darf ein Hotelzimmer pro Nacht kosten?", "de", "travel-expenses.md",
     "Travel and Expense Policy", "150 EUR per night"),
    ("年次休暇は何日もらえますか？", "ja", "annual-leave-policy.docx", "Annual Leave and Time Off Policy",
     "26 working days"),
    ("첫 출근 날 몇 시까지 가야 하나요?", "ko", "onboarding.md", "New Employee Onboarding Guide", "Arrive at 9:30"),
    # Quoted the learning days of the benefits slides before: no questions in general of its language
    # told which sentence is close to every question of it.
    ("Wie viele Urlaubstage bekomme ich pro Jahr?", "de", "annual-leave-policy.docx",
     "Annual Leave and Time Off Policy", "26 working days"),
    ("Combien de jours de congés payés ai-je par an ?", "fr", "annual-leave-policy.docx",
     "Annual Leave and Time Off Policy", "26 working days"),
])
def test_a_question_in_another_language_is_answered_by_meaning(handbook, question, language, file, title,
                                                               gold):
    answer = ask(handbook, question)
    assert not answer.refused, answer.refusal_reason
    lines = answer.text.splitlines()
    assert lines[0] == HEADERS[language], answer.text  # the asker's own: not the Chinese frame for kanji
    assert lines[1] == FROM_DOCUMENT[(language, "en")].format(title=title), answer.text
    assert answer.near_miss == []
    assert gold in quotes(answer)[0], answer.text
    assert answer.citations[0].chunk.file == file


def test_nouns_written_with_a_capital_are_no_missing_names(handbook):
    """German capitalises every noun: only codes and numbers count as names in such a language."""
    answer = ask(handbook, "Wie lang muss mein Passwort mindestens sein?")
    assert answer.gate["missing_names"] == 0.0
    assert "14 characters" in quotes(answer)[0], answer.text
    coded = ask(handbook, "Muss ich für das VPN die MFA benutzen?")
    assert coded.gate["missing_names"] == 0.0 and "(MFA) is mandatory" in quotes(coded)[0], coded.text
    absent = ask(handbook, "Wie richte ich das Headset HX-7000 ein?")
    assert absent.gate["missing_names"] == 1.0  # a code no passage holds


@pytest.mark.parametrize("question, language", [("Quelle est la capitale de la France ?", "fr"),
                                                ("Wer ist der Leiter der Rechtsabteilung?", "de")])
def test_what_the_handbook_does_not_cover_is_refused_in_any_language(handbook, question, language):
    answer = ask(handbook, question)
    assert answer.refused and answer.citations == [], answer.text
    assert answer.text.splitlines()[0] == REFUSALS[language], answer.text


def test_questions_in_general_are_written_in_every_language_of_the_answer_frame():
    """What an other-language sentence's closeness to any question is measured against, per asker."""
    from rag.judging.evidence import GENERAL_QUESTIONS
    from rag.words.languages import TEXTS

    assert set(GENERAL_QUESTIONS) == set(TEXTS)
    assert {len(questions) for questions in GENERAL_QUESTIONS.values()} == {len(GENERAL_QUESTIONS["en"])}
