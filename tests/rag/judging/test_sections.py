"""A passage's own section named by a question (rag.judging.sections): its heading's words, all in the question."""

from __future__ import annotations

from rag.words.lexical import tokenize
from rag.judging.sections import heading_words, named_section


def asked(question: str) -> set[str]:
    return set(tokenize(question))


def test_a_question_holding_every_word_of_the_passages_own_heading_names_it():
    first_day = named_section(asked("What do I need to do on my first day?"), ("Your first day",))
    assert first_day == {"first", "day"}
    assert named_section(asked("租赁合同到期后房东能不能涨租金？"), ("第十四章\u2002\u2002租赁合同",)) == {"租赁", "合同"}


def test_part_of_a_heading_does_not_name_it():
    """"报销的钱什么时候到账？" holds 报销, not 流程: every rule of "第五章 报销流程" would be lifted for one word."""
    assert named_section(asked("报销的钱什么时候到账？"), ("第五章 报销流程",)) == frozenset()
    assert named_section(asked("How many sick days do I get?"), ("Sick leave",)) == frozenset()


def test_only_the_passages_own_heading_counts_not_the_chapters_above_it():
    """A chapter heads every passage under it: naming it says nothing of which one answers."""
    path = ("Your first week", "Mandatory training")
    assert named_section(asked("What happens in my first week?"), path) == frozenset()
    assert named_section(asked("Is the training mandatory?"), path) == {"mandatori", "train"}


def test_a_headings_number_and_function_words_are_not_words_to_name():
    """第一天 is no 第一章; "Who to ask" is named by "ask" alone."""
    assert heading_words("第一章 总则") == {"总则"}
    assert heading_words("4.2 How to report") == {"report"}
    assert named_section(asked("Who do I ask about my laptop?"), ("Who to ask",)) == {"ask"}
    assert named_section(asked("第一天做什么"), ("第一章",)) == frozenset()


def test_a_passage_without_headings_or_with_a_heading_of_numbers_is_named_by_nothing():
    assert named_section(asked("What is the 1973 oil crisis?"), ()) == frozenset()
    assert named_section(asked("第三条是什么"), ("第三条",)) == frozenset()
