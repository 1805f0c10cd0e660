"""The notes below an answer, in the answer's language."""

import string

import pytest

from bot.core.answering import (
    COURTESY_REPLIES,
    UNSUPPORTED,
    UNSUPPORTED_NOTES,
    WARNING,
    answer_notes,
    courtesy_reply,
    unsupported_note,
)
from rag.answering.citations import NOT_IN_SOURCES
from rag.words.languages import TEXTS
from rag.types import Answer


def answer(question: str, text: str, uncited: list[str], notices: list[str] | None = None) -> Answer:
    return Answer(question, text, [], False, "generative", uncited=uncited, notices=notices or [])


def fields(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name}


def test_every_language_the_answers_speak_has_its_own_footer_for_one_and_several_sentences():
    assert sorted(UNSUPPORTED_NOTES) == sorted(TEXTS)
    assert len({UNSUPPORTED_NOTES[lang] for lang in TEXTS}) == len(TEXTS)
    for one, several in UNSUPPORTED_NOTES.values():
        assert fields(one) == {"mark"} and fields(several) == {"count", "mark"}, (one, several)


@pytest.mark.parametrize(("question", "text", "expected"), [
    ("Wie viele Urlaubstage bekomme ich pro Jahr?",
     "Sie erhalten 26 Tage [1]. Der Rest verfällt (nicht in den Quellen gefunden).",
     ("1 Satz wird von keiner Quelle gestützt: Er ist mit „(nicht in den Quellen gefunden)“ gekennzeichnet "
     "und zitiert nichts.")),
    ("Combien de jours de congé ai-je par an ?",
     ("Vous avez 26 jours [1]. Le reste est perdu (introuvable dans les sources). Le lundi est libre "
     "(introuvable dans les sources)."),
     ("2 phrases ne sont étayées par aucune source\u00a0: elles sont signalées par "
     "«\u202f(introuvable dans les sources)\u202f» et ne citent rien.")),
    ("年休假は何日もらえますか？", "26日です[1]。残りは失効します（出典に見当たりません）。",
     "出典で裏付けられていない文が 1 件あります。「（出典に見当たりません）」と表示し、出典を引用していません。"),
    ("年假有几天？", "年假十天[1]。剩余作废（来源中未找到）。",
     "有 1 句话在来源中找不到依据，已标注“（来源中未找到）”，不引用任何来源。"),
    ("Hur många semesterdagar får jag?", "You get 26 days [1]. The rest lapses (not found in the sources).",
     "1 sentence is not backed by any source: it is marked “(not found in the sources)” and cites nothing."),
])
def test_the_footer_for_unsupported_sentences_speaks_the_answers_language(question, text, expected):
    uncited = ["one"] * text.count(NOT_IN_SOURCES[_mark_language(text)].strip())
    assert unsupported_note(answer(question, text, uncited)) == expected


def test_notes_list_what_the_pipeline_noticed_before_the_unsupported_sentences():
    given = answer("How many days off?", "26 days [1]. Monday is free (not found in the sources).", ["Monday"],
                   notices=["The reranker is unavailable; results are in retrieval order."])
    assert answer_notes(given) == [
        (WARNING, "The reranker is unavailable; results are in retrieval order."),
        (UNSUPPORTED, ("1 sentence is not backed by any source: it is marked “(not found in the sources)” "
                      "and cites nothing."))]
    assert answer_notes(answer("How many days off?", "26 days [1].", [])) == []


def _mark_language(text: str) -> str:
    return next(lang for lang in TEXTS if NOT_IN_SOURCES[lang].strip() in text)


@pytest.mark.parametrize("message, kind, language", [
    ("thanks!", "thanks", "en"), ("好的，谢谢", "thanks", "zh"), ("Danke!", "thanks", "de"),
    ("¡Gracias!", "thanks", "es"), ("merci beaucoup", "thanks", "fr"), ("ありがとうございます", "thanks", "ja"),
    ("hi!", "greeting", "en"), ("Hallo zusammen", "greeting", "de"), ("你好", "greeting", "zh"),
])
def test_a_courtesy_is_answered_in_the_language_it_is_written_in(message, kind, language):
    """"Danke!" was answered "You're welcome!": language identification reads a word or two as English."""
    assert courtesy_reply(message) == COURTESY_REPLIES[kind][language]


def test_a_question_gets_no_courtesy_reply():
    assert courtesy_reply("Danke, und wie viele Urlaubstage habe ich?") is None
    assert courtesy_reply("thanks, but what about Lisbon?") is None
