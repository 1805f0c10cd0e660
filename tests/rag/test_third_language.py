"""A knowledge base written in neither of the known languages (benchmarks/data/handbuch, a German handbook;
the embedded default, real index and model): its passages are German, so a German question is a question
in one language — judged on the same-language scale, refused when unrelated, a near miss on the words it
never uses — and an English or Chinese one a question across languages."""

from __future__ import annotations

import pytest

from rag.judging.extractive import FROM_OTHER_DOCUMENT, HEADERS, NEAR_MISS
from rag.answering.prompt import REFUSALS
from tests.conftest import HANDBOOK, PROJECT, built_index
from tests.rag.judging.test_extractive import ask, quotes

HANDBUCH = PROJECT / "benchmarks" / "data" / "handbuch"


@pytest.fixture(scope="module")
def handbuch(shared_data_dir, tmp_path_factory):
    return built_index(shared_data_dir, tmp_path_factory, "handbuch", [HANDBUCH])


@pytest.mark.parametrize("question, file, gold", [
    ("Wie teuer darf mein Hotel pro Nacht sein?", "reisekosten.md", "bis 130 Euro pro Nacht"),
    ("Muss ich mein Passwort regelmäßig ändern?", "it-sicherheit.md",
     "Ein regelmäßiger Passwortwechsel ist nicht vorgeschrieben"),
])
def test_a_german_question_on_german_documents_is_answered_in_one_language(handbuch, question, file, gold):
    answer = ask(handbuch, question)
    assert not answer.refused, answer.refusal_reason
    lines = answer.text.splitlines()
    assert lines[0] == HEADERS["de"] and lines[1].startswith("> "), answer.text  # no "other document" intro
    assert gold in quotes(answer)[0] and answer.citations[0].chunk.file == file, answer.text
    assert answer.near_miss == []
    assert answer.gate["sentence"] < 0.95  # read on the same-language scale, not lifted as across languages


@pytest.mark.parametrize("question", ["Wie backe ich einen Käsekuchen?",
                                      "Welche Aktien soll ich dieses Jahr kaufen?",
                                      "Wer leitet die Rechtsabteilung?"])
def test_an_unrelated_german_question_is_refused(handbuch, question):
    """Answered with quotes before: the German cosines were lifted as if across languages."""
    answer = ask(handbuch, question)
    assert answer.refused and answer.text.startswith(REFUSALS["de"]), answer.text


def test_a_word_the_german_handbook_never_uses_is_a_near_miss(handbuch):
    answer = ask(handbuch, "Darf ich meinen Hund mit ins Büro bringen?")
    assert answer.near_miss == ["Hund"], answer.text  # not "ich" nor "meinen": function words of German
    assert answer.text.splitlines()[0] == NEAR_MISS["de"].format(terms="„Hund“"), answer.text


@pytest.mark.parametrize("question, terms", [
    ("Bekomme ich ein Jobticket für den Nahverkehr?", ["Jobticket", "Nahverkehr"]),
    ("Zahlt die Firma in meine Betriebsrente ein?", ["Betriebsrente"]),
])
def test_a_near_miss_names_what_is_asked_about_not_its_verb(handbuch, question, terms):
    """Named before: „Bekomme“ (the opening verb) and „Zahlt“, „Firma“ (forms of the handbook's
    „zahlen“ and „Firmenlaptop“)."""
    answer = ask(handbuch, question)
    assert answer.near_miss == terms, answer.text
    quoted = ", ".join(f"„{t}“" for t in terms)
    assert answer.text.splitlines()[0] == NEAR_MISS["de"].format(terms=quoted), answer.text


def test_topic_words_keep_the_opening_word_when_it_is_the_only_one():
    from rag.judging.near_miss import _topic_words
    assert _topic_words("Jobticket?", ["Jobticket"], {"bahncard"}) == ["Jobticket"]
    assert _topic_words("Zahlt die Firma?", ["Zahlt", "Firma"], {"zahlen", "firmenlaptop"}) == []
    assert _topic_words("Darf ich den Hund mitbringen?", ["Hund"], {"hundert"}) == ["Hund"]  # 4 letters: whole


@pytest.mark.parametrize("question, asked, title, gold", [
    ("How long is the probation period?", "en", "Einarbeitung neuer Mitarbeitender", "sechs Monate"),
    ("试用期多长？", "zh", "Einarbeitung neuer Mitarbeitender", "sechs Monate"),
])
def test_a_question_in_a_known_language_is_answered_across_into_german(handbuch, question, asked, title,
                                                                     gold):
    answer = ask(handbuch, question)
    assert not answer.refused, answer.refusal_reason
    lines = answer.text.splitlines()
    assert lines[0] == HEADERS[asked]
    assert lines[1] == FROM_OTHER_DOCUMENT[asked].format(title=title), answer.text
    assert gold in quotes(answer)[0], answer.text
    assert answer.near_miss == []  # the dictionary cannot tell a German word absent


@pytest.fixture(scope="module")
def three_languages(shared_data_dir, tmp_path_factory):
    """The German handbook beside the sample one (English and Chinese documents)."""
    return built_index(shared_data_dir, tmp_path_factory, "three-languages", [HANDBOOK, HANDBUCH])


@pytest.mark.parametrize("question, file, gold", [
    ("Wie lange ist die Probezeit?", "einarbeitung.md", "Die Probezeit dauert sechs Monate"),
    ("Can I fly business class?", "travel-expenses.md", "Business class requires written approval"),
    ("出差吃饭能报多少？", "差旅报销制度.md", "每人每天一百元"),
])
def test_a_knowledge_base_of_three_languages_answers_each_askers_own(three_languages, question, file, gold):
    """A German question's candidates hold German, English and Chinese passages: the other languages' best
    join its top passages (topic-free questions in English stand in for German ones) and its own answers."""
    answer = ask(three_languages, question)
    assert not answer.refused, answer.refusal_reason
    assert gold in quotes(answer)[0] and answer.citations[0].chunk.file.endswith(file), answer.text


def test_a_german_asker_gets_the_german_rule_where_english_and_chinese_ones_stand_beside_it(three_languages):
    """The English passages, which BM25 cannot read for a German question, were scored as if BM25 ranked them
    as high as dense did: the BahnCard rule was quoted, the six weeks' deadline not at all."""
    answer = ask(three_languages, "Wie spät darf ich meine Reisekosten abrechnen?")
    assert not answer.refused, answer.refusal_reason
    assert "spätestens sechs Wochen nach Reiseende" in quotes(answer)[0], answer.text
    assert answer.citations[0].chunk.file.endswith("reisekosten.md"), answer.text
