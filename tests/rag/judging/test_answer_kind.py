"""The kind of answer a question asks for, and which sentence can give it (rag.judging.answer_kind)."""

from __future__ import annotations

import pytest

from rag.judging.answer_kind import (
    AMOUNT,
    DATE,
    SPAN,
    TIME,
    YEAR,
    asked_kind,
    gives,
    giving_first,
    kind_first,
    unstated_kind,
)
from rag.judging.negation import AS_CLOSE


@pytest.mark.parametrize("question, language, kind", [
    ("What time does the building close?", "en", TIME),
    ("At what time do the offices open?", "en", TIME),
    ("几点下班？", "zh", TIME),
    ("Um wie viel Uhr schließt das Büro?", "de", TIME),
    ("À quelle heure ouvre le bureau ?", "fr", TIME),
    ("In what year did the Normans conquer England?", "en", YEAR),
    ("民法典是哪一年通过的？", "zh", YEAR),
    ("How many days of paternity leave do I get?", "en", AMOUNT),
    ("How much can I spend on a hotel?", "en", AMOUNT),
    ("How many hours is the office open?", "en", AMOUNT),  # hours as an amount, not a time of day
    ("产假有多少天？", "zh", AMOUNT),
    ("年假有几天？", "zh", AMOUNT),
    ("Wie viele Urlaubstage habe ich?", "de", AMOUNT),
    ("¿Cuántos días de vacaciones tengo?", "es", AMOUNT),
    ("VPN 密码多久换一次", "zh", SPAN),
    ("诉讼时效是多长时间？", "zh", SPAN),  # 多长 alone may ask a length: an amount
    ("How often does the European Council meet?", "en", SPAN),
    ("How often must I change my password?", "en", SPAN),  # "every quarter" answers it: no number needed
    ("Wie oft muss ich mein Passwort ändern?", "de", SPAN),
    ("How long is the Rhine?", "en", AMOUNT),  # English "how long" also asks a length
    ("春节放假放到哪天？", "zh", DATE),
    ("工资每月几号发？", "zh", DATE),  # 几 also asks an amount; 几号 a date
    ("IT 服务台在几号楼？", "zh", AMOUNT),  # 几号楼 is which building: a number, as before
    ("On what day was the treaty signed?", "en", DATE),
    ("An welchem Tag ist das Büro geschlossen?", "de", DATE),
    ("试用期多长？", "zh", AMOUNT),
])
def test_a_question_asks_for_the_kind_its_question_words_ask(question, language, kind):
    assert asked_kind(question, language) == kind


@pytest.mark.parametrize("question, language", [
    ("What is the guest Wi-Fi password?", "en"),
    ("How do I book a desk?", "en"),
    ("Who approves business trips?", "en"),
    ("几乎所有员工都有年假吗？", "zh"),  # 几乎 is "almost", no question word
    ("新员工第一天要做什么？", "zh"),
    ("Quanti giorni di ferie ho?", "sv"),  # a language with no words listed here asks no kind
])
def test_a_question_that_asks_no_kind_asks_none(question, language):
    assert asked_kind(question, language) is None


@pytest.mark.parametrize("sentence, kind, language", [
    ("The offices are open from 7:00 to 21:00 on working days.", TIME, "en"),
    ("Book a desk by 6 pm on the previous day.", TIME, "en"),
    ("办公室每天早上九点开门。", TIME, "zh"),
    ("Das Büro öffnet um 8 Uhr.", TIME, "de"),
    ("They habitually gathered at night, for prayer and singing psalms.", TIME, "en"),  # a part of the day:
    ("Die Kantine öffnet mittags und schließt abends.", TIME, "de"),
    ("La mensa apre a mezzogiorno e chiude la sera.", TIME, "it"),
    ("Het kantoor sluit om middernacht, at midnight.", TIME, "nl"),  # a language not listed: any listed word
    ("The Normans conquered England in 1066.", YEAR, "en"),
    ("It was built in the 12th century.", YEAR, "en"),
    ("本法自二〇二一年一月一日起施行。", YEAR, "zh"),
    ("Fathers get two weeks of leave.", AMOUNT, "en"),
    ("Hotels are reimbursed up to 180 EUR a night.", AMOUNT, "en"),
    ("男方享受陪产假十五天。", AMOUNT, "zh"),
    ("Es gibt dreißig Urlaubstage.", AMOUNT, "de"),
    ("Passwords are changed every quarter.", SPAN, "en"),
    ("Passwords do not expire on a schedule.", SPAN, "en"),
    ("The European Council meets twice a year.", SPAN, "en"),
    ("年假须提前五个工作日申请。", SPAN, "zh"),
    ("密码每季度更换一次。", SPAN, "zh"),
    ("Das Passwort wird alle drei Monate geändert.", SPAN, "de"),
    ("| 2026-02-17 | Spring Festival | Shanghai | Closed 17-23 February |", DATE, "en"),
    ("The treaty was signed on 4 July.", DATE, "en"),
    ("The office reopens on 5 May.", DATE, "en"),
    ("当年未休完的年假可顺延至次年三月三十一日。", DATE, "zh"),
    ("每周五可以在家办公。", SPAN, "zh"),
    ("Le bureau ferme le lundi.", DATE, "fr"),
])
def test_a_sentence_gives_the_kind_it_states(sentence, kind, language):
    assert gives(sentence, kind, language)


@pytest.mark.parametrize("sentence, kind, language", [
    ("Office closed | New Year's Day | 2026-01-01", TIME, "en"),  # a date is no time of day
    ("Version 2.50 of the policy applies.", TIME, "en"),  # nor is a decimal
    ("Leave is granted on request.", AMOUNT, "en"),
    ("The first day starts at reception.", AMOUNT, "en"),  # an ordinal is no amount
    ("产假按照国家规定执行。", AMOUNT, "zh"),
    ("The Normans conquered England.", YEAR, "en"),
    ("Le bureau sera fermé le premier janvier.", TIME, "fr"),  # French "sera" is "will be", not the evening
    ("Passwords must be at least 14 characters long.", SPAN, "en"),  # a number, of no unit of time
    ("Every employee receives a laptop.", SPAN, "en"),
    ("The headquarters are in Brussels.", SPAN, "en"),
    ("员工享受带薪年休假。", SPAN, "zh"),  # 年 of 年休假 is no span
    ("It may be used once.", DATE, "en"),  # "may" and "march" are months only beside a day's number
    ("The march began at noon.", DATE, "en"),
    ("年假须提前五个工作日申请。", DATE, "zh"),
])
def test_a_sentence_that_states_no_such_thing_does_not_give_it(sentence, kind, language):
    assert not gives(sentence, kind, language)


def _ranked(*scored: tuple[str, float]) -> list[tuple[str, float]]:
    return list(scored)


def _first(question: str, ranked: list[tuple[str, float]]) -> list[str]:
    led = kind_first(question, "en", ranked, lambda c: c[0], lambda c: "en", lambda c: c[1])
    return [text for text, _ in led]


def test_the_sentence_that_gives_the_kind_leads_when_it_scores_as_close_as_the_best():
    ranked = _ranked(("Office closed on public holidays.", 0.853),
                     ("Open from 7:00 to 21:00.", 0.853 - AS_CLOSE))
    assert _first("What time does the building close?", ranked) == ["Open from 7:00 to 21:00.",
                                                                     "Office closed on public holidays."]


def test_an_amount_a_hundredth_behind_leads_the_sentence_that_shares_the_question_s_words():
    """The units of one passage score within a few hundredths of one another: the words "away" and "office"
    lift a sentence on the office channel above the one that says how much a day is paid back."""
    ranked = _ranked(("Post in the office channel when you step away, and again when you are back.", 0.876),
                     ("Coworking desks are paid back up to $12 a day while we are on our seed round.", 0.865))
    question = "If I rent a desk while I'm away from the office, how much do they pay me back per day?"
    assert _first(question, ranked)[0].startswith("Coworking desks")


def test_a_sentence_that_gives_the_kind_further_behind_does_not_lead():
    ranked = _ranked(("Office closed on public holidays.", 0.853), ("Open from 7:00 to 21:00.", 0.83))
    assert _first("What time does the building close?", ranked)[0] == "Office closed on public holidays."


def test_the_best_sentence_that_gives_the_kind_keeps_its_place():
    ranked = _ranked(("Open from 7:00 to 21:00.", 0.86), ("Open until 22:00 on Fridays.", 0.855))
    assert _first("What time does the building close?", ranked)[0] == "Open from 7:00 to 21:00."


def _by_meaning(question: str, ranked: list[tuple[str, float, float, bool]]) -> list[str]:
    """Each candidate: text, score, cosine, whether it holds a key word of the question."""
    led = kind_first(question, "en", ranked, lambda c: c[0], lambda c: "en", lambda c: c[1],
                     lambda c: c[2], lambda c: c[3])
    return [c[0] for c in led]


def test_a_time_as_close_in_meaning_as_the_best_leads_though_its_words_score_lower():
    """The holiday table's "Closed" rows share "close" with the question; the opening hours its meaning."""
    ranked = [("| 2026-05-01 | Labour Day | All offices | Closed |", 0.894, 0.864, True),
              ("| 2026-12-24 | December closure | All offices |", 0.878, 0.869, True),
              ("The offices are open from 7:00 to 21:00 on working days.", 0.869, 0.863, True),
              ("| 2026-04-03 | Good Friday | Lisbon | Closed |", 0.847, 0.832, True)]
    assert _by_meaning("What time does the office close?", ranked)[0].startswith("The offices are open")


@pytest.mark.parametrize("question, ranked", [
    # further in meaning than the margin
    ("What time does the office close?", [("| Labour Day | Closed |", 0.894, 0.864, True),
                                          ("Open from 7:00 to 21:00.", 0.85, 0.85, True)]),
    # as close in meaning, but of none of the question's key words: "Tell your manager before 10:00"
    ("What time do we finish work?",
     [("Your manager answers within three working days.", 0.869, 0.858, False),
      ("Tell your manager before 10:00 if you are ill.", 0.83, 0.868, False)]),
    # an amount: a sentence that states none may still answer ("free")
    ("How much does parking cost?", [("Bicycle parking is free.", 0.88, 0.86, True),
                                     ("Parking costs 5 EUR a day.", 0.85, 0.86, True)]),
])
def test_a_time_or_year_leads_by_meaning_only_when_as_close_and_on_topic(question, ranked):
    assert _by_meaning(question, ranked) == [c[0] for c in ranked]


def test_a_question_that_asks_no_kind_keeps_its_order():
    ranked = _ranked(("Desks are shared.", 0.80), ("Book a desk by 18:00.", 0.80))
    assert _first("How do I book a desk?", ranked) == ["Desks are shared.", "Book a desk by 18:00."]


@pytest.mark.parametrize("question, language, texts, kind", [
    ("In what year was Huguon built?", "en",
     [("Huguon, the gate of King Hugo, was said to be haunted by the ghost of le roi Huguet.", "en")], YEAR),
    ("What time does the building close?", "en",
     [("| 2026-05-01 | Labour Day | All offices | Closed |", "en"), ("Desks are shared.", "en")], TIME),
    ("公司食堂几点开饭？", "zh", [("Employees on a business trip receive a daily meal allowance of 45 EUR.", "en")],
     TIME),
])
def test_a_year_or_time_no_text_states_is_unstated(question, language, texts, kind):
    assert unstated_kind(question, language, texts) == kind


def test_the_sentence_that_says_how_often_leads_over_one_that_states_another_amount():
    """"VPN 密码多久换一次": "at least 14 characters long" states a number, and scored ahead by .004."""
    ranked = _ranked(("Passwords must be at least 14 characters long.", 0.8555),
                     ("Passwords do not expire on a schedule.", 0.8519))
    led = kind_first("VPN 密码多久换一次", "zh", ranked, lambda c: c[0], lambda c: "en", lambda c: c[1])
    assert led[0][0] == "Passwords do not expire on a schedule."


def test_the_excerpt_that_states_the_date_asked_leads_the_answer():
    """"春节放假放到哪天？": the leave rule scored closest; the holiday table's row states the date."""
    excerpts = [[("年假须提前五个工作日申请。", "zh")],
                [("| 2026-02-17 | Spring Festival | Shanghai | Closed 17-23 February |", "en")]]
    led = giving_first("春节放假放到哪天？", "zh", excerpts, lambda u: u[0], lambda u: u[1], lambda u: True)
    assert led == [excerpts[1], excerpts[0]]


@pytest.mark.parametrize("question, first", [
    ("春节放假放到哪天？", [("| 2026-10-01 | National Day | Shanghai | Closed 1-7 October |", "en")]),  # states one
    ("年假有几天？", [("年假须提前五个工作日申请。", "zh")]),  # an amount: "free" may answer it
])
def test_an_excerpt_that_states_the_kind_or_any_for_an_amount_keeps_the_lead(question, first):
    excerpts = [first, [("| 2026-02-17 | Spring Festival | Closed 17-23 February |", "en")]]
    assert giving_first(question, "zh", excerpts, lambda u: u[0], lambda u: u[1], lambda u: True) == excerpts


@pytest.mark.parametrize("question, excerpts", [
    # a date of another matter
    ("On what day does the office reopen?", [[("The office is being renovated.", True)],
                                             [("The brewery was founded on 4 July 1724.", False)]]),
    # a year: its sentence leads before the quotes are chosen, or not at all (another king's 1672)
    ("In what year was Louis XIII crowned?", [[("His successor Louis XIII became more intolerant.", True)],
                                              [("Louis XIV was opposed after the attack of 1672.", True)]]),
])
def test_only_an_excerpt_on_the_questions_topic_that_states_the_date_asked_leads(question, excerpts):
    led = giving_first(question, "en", excerpts, lambda u: u[0], lambda u: "en", lambda u: u[1])
    assert led == excerpts


def test_a_date_asked_does_not_reorder_the_sentences_before_the_quotes_are_chosen():
    """Policies date their deadlines: a closer sentence that states a date ("三月三十一日" of the carry-over
    rule) is no answer to "春节放假放到哪天？" for that."""
    ranked = _ranked(("年假须提前五个工作日申请。", 0.8954), ("年假可顺延至次年三月三十一日。", 0.8934))
    assert _first_zh("春节放假放到哪天？", ranked) == [text for text, _ in ranked]


def _first_zh(question: str, ranked: list[tuple[str, float]]) -> list[str]:
    led = kind_first(question, "zh", ranked, lambda c: c[0], lambda c: "zh", lambda c: c[1])
    return [text for text, _ in led]


@pytest.mark.parametrize("question, language, texts", [
    ("What time does the building close?", "en",
     [("| 2026-05-01 | Labour Day | Closed |", "en"), ("The offices are open from 7:00 to 21:00.", "en")]),
    ("办公室几点关门？", "zh", [("The offices are open from 7:00 to 21:00 on working days.", "en")]),
    ("In which year did the Normans conquer England?", "en",
     [("The Normans conquered England in 1066.", "en")]),
    ("How much does parking cost?", "en", [("Bicycle parking is free.", "en")]),  # an amount is not judged
    ("How often must I change my password?", "en", [("Change it when it was exposed.", "en")]),  # nor a span
    ("Where can I leave my bike?", "en", [("Bicycle parking is on the ground floor.", "en")]),  # asks no kind
    ("What year was it built?", "en", []),  # nothing to judge
])
def test_a_kind_one_text_states_or_no_year_or_time_asked_is_not_unstated(question, language, texts):
    assert unstated_kind(question, language, texts) is None


def test_a_question_asks_for_code_only_when_it_names_a_command_a_configuration_or_a_format():
    from rag.judging.answer_kind import asks_for_code

    asking = [("What command starts the demo client?", "en"), ("How do I set the env var for the meta server?", "en"),
              ("Show me the YAML for two clusters", "en"), ("pom 里怎么加依赖？", "zh"), ("启动脚本在哪里？", "zh"),
              ("Wie lautet der Befehl zum Starten?", "de")]
    not_asking = [("Is there a dress code?", "en"), ("Which Java version does the client need?", "en"),
                  ("Apollo客户端对 Guava 的版本有什么要求？", "zh"), ("What terminal does the shuttle leave from?", "en"),
                  ("客户端多久拉一次配置？", "zh")]
    assert all(asks_for_code(q, lang) for q, lang in asking)
    assert not any(asks_for_code(q, lang) for q, lang in not_asking)
