"""What a question asks when it asks what is not so, and which sentence can answer it (rag.judging.negation)."""

from __future__ import annotations

import pytest

from rag.judging.negation import AS_CLOSE, asks_what_is_not, denial_first, denies


@pytest.mark.parametrize("question, language", [
    ("What is not the main judicial body of the EU?", "en"),
    ("Which expenses are never reimbursed?", "en"),
    ("Why doesn't the VPN connect?", "en"),
    ("Who cannot sign the contract?", "en"),
    ("When is the office not open?", "en"),  # "when" asks here; it sets the scene mid-question
    ("哪些费用不能报销？", "zh"),
    ("出差超过五天，哪些费用不能报销？", "zh"),
    ("Welche Kosten werden nicht erstattet?", "de"),
    ("Qu'est-ce qui n'est pas remboursé ?", "fr"),
    ("¿Qué gastos no se reembolsan?", "es"),
    ("Quali spese non sono rimborsate?", "it"),
])
def test_a_negation_in_the_main_clause_asks_what_is_not(question, language):
    assert asks_what_is_not(question, language)


@pytest.mark.parametrize("question, language", [
    ("If I cannot find my receipt, what do I do?", "en"),  # the negation sets the scene
    ("What happens if I do not submit receipts in time?", "en"),
    ("What do I do when I cannot log in?", "en"),
    ("Does it matter whether or not I book through the portal?", "en"),
    ("How powerful may or may not a Turing machine be?", "en"),
    ("Is the allowance paid no later than the next salary?", "en"),
    ("如果没有发票怎么办？", "zh"),
    ("电表因故障未能记录用户用电量的，供电公司能否要求用户补交电费？", "zh"),  # the question comes last
    ("没休完的年假能留到明年吗？", "zh"),  # 没休完: a kind of leave, not a negation of the question
    ("Wenn ich nicht ins Büro kann, wen rufe ich an?", "de"),
    ("How many days of leave do I get?", "en"),
    ("Are receipts not required for the meal allowance?", "en"),  # yes or no: the rule answers it either way
    ("财产被同居的亲戚偷了，可以不抓起来吗？", "zh"),
    ("行政机关未通知申请人是否影响听证结果？听证会上由谁担任主持人？", "zh"),  # the one asking who negates nothing
    ("ない", "ja"),  # a language without words listed: never judged
])
def test_a_question_that_only_mentions_a_negation_does_not(question, language):
    assert not asks_what_is_not(question, language)


@pytest.mark.parametrize("sentence, language", [
    ("Fines for traffic or parking offences are never reimbursed.", "en"),
    ("Receipts aren't required for the allowance itself.", "en"),
    ("The French crown's refusal to allow non-Catholics to settle in New France.", "en"),
    ("The UK was exempt from the Social Charter.", "en"),
    ("第十四条 超过九十日未提交的报销申请，财务部不予受理。", "zh"),
    ("Private Fahrten werden nicht erstattet.", "de"),
])
def test_a_sentence_denies_by_any_word_that_denies(sentence, language):
    assert denies(sentence, language)


@pytest.mark.parametrize("sentence, language", [
    ("Company laptops are encrypted, managed centrally and must receive security updates.", "en"),
    ("The bank pays the banner's bandwidth.", "en"),  # "ban" only as a word of its own
    ("Die Bank zahlt die Reisekosten.", "de"),
])
def test_a_sentence_that_says_what_is_does_not_deny(sentence, language):
    assert not denies(sentence, language)


def test_a_language_without_listed_words_is_never_held_to_deny():
    assert denies("会社のノートパソコンは暗号化されています。", "ja")


RANKED = [("Company laptops are encrypted.", 0.90), ("Laptops are not shared between employees.", 0.895),
          ("Personal computers must never hold customer data.", 0.80)]


def _order(question: str, ranked=RANKED):
    return denial_first(question, "en", ranked, lambda r: r[0], lambda r: "en", lambda r: r[1])


def test_a_question_that_asks_nothing_of_what_is_not_keeps_its_order():
    assert _order("Are company laptops encrypted?") == RANKED


def test_the_sentence_that_denies_leads_when_it_scores_as_close_as_the_best():
    led = _order("Which laptops are not shared?")
    assert led[0] == RANKED[1] and led[1:] == [RANKED[0], RANKED[2]]


def test_no_sentence_that_denies_close_to_the_best_is_none():
    far = [RANKED[0], ("Personal computers must never hold customer data.", 0.90 - AS_CLOSE - 0.001)]
    assert _order("Which laptops are not encrypted?", far) is None
    assert _order("Which laptops are not encrypted?", []) == []
