"""A question that asks two things is answered from each thing's own source (rag.judging.parts), on the embedded
default and a real index: both documents are quoted and cited, in the order asked, in English and in Chinese;
a part that no passage answers is named under the quotes of the one that is."""

from __future__ import annotations

import pytest

from rag.judging.parts import question_parts
from tests.conftest import built_index
from tests.rag.judging.test_extractive import ask, quotes

VACATION = """# Vacation

Every full-time employee gets 20 days of paid vacation a year, which build up month by month.

Tell your team at least two weeks before you leave, and put the days in the shared calendar.

Unused vacation days do not carry over into the next calendar year.
"""
HOLIDAYS = """# Public holidays

The office is closed on New Year's Day, Independence Day, Thanksgiving and Christmas Day.

When a holiday falls on a Saturday we take the Friday before it off; when it falls on a Sunday, the Monday
after it is the day off.
"""
LAPTOPS = """# Equipment

Each new hire receives a laptop on the first morning. Broken equipment is reported to the IT desk, which
replaces it within two working days.
"""
REIMBURSE = """# 报销

出差期间的住宿费每晚不超过 600 元，需要在出差结束后 10 个工作日内提交发票。

市内交通可以报销地铁和公交费用，打车需要事先得到部门经理的同意。
"""
ONBOARDING = """# 入职

新员工入职第一天上午九点到前台报到，人事会发放门禁卡和工牌。

试用期为三个月，期满前两周由直属经理进行转正评估。
"""
MEALS = """# 餐饮

公司食堂提供免费午餐，开放时间为中午十一点半到一点半。
"""


@pytest.fixture(scope="module")
def handbook(shared_data_dir, tmp_path_factory):
    folder = tmp_path_factory.mktemp("parts-docs")
    for name, text in {"vacation.md": VACATION, "holidays.md": HOLIDAYS, "equipment.md": LAPTOPS,
                       "reimbursement.md": REIMBURSE, "onboarding.md": ONBOARDING, "meals.md": MEALS}.items():
        (folder / name).write_text(text, encoding="utf-8")
    return built_index(shared_data_dir, tmp_path_factory, "parts-index", [folder])


def cited(answer) -> set[str]:
    return {c.chunk.file.rsplit("/", 1)[-1] for c in answer.citations}


def test_an_english_question_of_two_asks_quotes_and_cites_each_asks_document_in_the_order_asked(handbook):
    answer = ask(handbook, "How many vacation days do I get a year, and what happens when a holiday lands on a "
                           "Sunday?")
    excerpts = quotes(answer)
    assert not answer.refused
    assert {"vacation.md", "holidays.md"} <= cited(answer)
    first = next(n for n, e in enumerate(excerpts) if "20 days of paid vacation" in e)
    second = next(n for n, e in enumerate(excerpts) if "the Monday" in e)
    assert first < second


def test_each_ask_finds_its_own_passages_when_the_question_s_passages_hold_one_side(handbook):
    # With one passage for the whole question, the holiday rule is found only by its own ask's search
    answer = ask(handbook, "How many vacation days do I get a year, and what happens when a holiday lands on a "
                           "Sunday?", top_k=1)
    assert {"vacation.md", "holidays.md"} <= cited(answer)
    assert "the Monday" in "\n".join(quotes(answer))


def test_a_chinese_question_of_two_question_sentences_quotes_both_documents(handbook):
    answer = ask(handbook, "出差住酒店一晚最多能报多少钱？新人第一天几点去哪里报到？")
    text = "\n".join(quotes(answer))
    assert not answer.refused
    assert {"reimbursement.md", "onboarding.md"} <= cited(answer)
    assert "600 元" in text and "九点到前台报到" in text


def test_a_chinese_question_of_two_coordinated_clauses_quotes_both_documents(handbook):
    answer = ask(handbook, "试用期有多长，还有食堂午餐几点开始供应？")
    text = "\n".join(quotes(answer))
    assert {"onboarding.md", "meals.md"} <= cited(answer)
    assert "三个月" in text and "十一点半" in text


def test_a_part_no_passage_answers_is_named_under_the_quotes_of_the_part_that_is(handbook):
    answer = ask(handbook, "How many vacation days do I get a year, and how much is the company's monthly "
                           "gym membership subsidy?")
    assert not answer.refused
    assert "20 days of paid vacation" in "\n".join(quotes(answer))
    last = answer.text.rstrip().splitlines()[-1]
    assert last.startswith("No passage found answers") and "gym membership subsidy" in last


@pytest.mark.parametrize(("question", "language", "asks"), [
    ("How many vacation days do I get a year, and what happens when a holiday lands on a Sunday?", "en",
     ["How many vacation days do I get a year", "what happens when a holiday lands on a Sunday?"]),
    ("Who approves my training budget and how often do we meet?", "en",
     ["Who approves my training budget", "how often do we meet?"]),
    ("Can I bring my dog to the office, and do I need to tell my manager first?", "en",
     ["Can I bring my dog to the office", "do I need to tell my manager first?"]),
    ("出差住酒店一晚最多能报多少钱？新人第一天几点去哪里报到？", "zh",
     ["出差住酒店一晚最多能报多少钱？", "新人第一天几点去哪里报到？"]),
    ("试用期有多长，还有食堂午餐几点开始供应？", "zh", ["试用期有多长", "食堂午餐几点开始供应？"]),
    ("What is the difference between sick leave and vacation?", "en", ["sick leave", "vacation"]),
    ("年假和病假有什么区别？", "zh", ["年假", "病假"]),
])
def test_the_asks_of_a_question_are_read_from_its_syntax(question, language, asks):
    assert [p.text for p in question_parts(question, language)] == asks


@pytest.mark.parametrize(("question", "language"), [
    ("Whom do I ask and how early?", "en"),  # "how early" has no words of its own: one ask
    ("What do I do if my laptop and my phone are both stolen?", "en"),
    ("If I cannot log in, whom do I call?", "en"),
    ("When I travel abroad, what can I claim for meals?", "en"),
    ("I travel a lot when it is summer. What can I claim for meals?", "en"),
    ("What did the Court of Justice say that Mr. Steymann was not entitled to do?", "en"),
    ("What are problems that cannot be solved in theory, but which in practice take too long to solve?", "en"),
    ("Which treaties are directly effective if they are clear, unconditional, and don't require further action?",
     "en"),
    ("Which salt and pepper shakers are in the kitchen?", "en"),
    ("如果我没带工牌，怎么进门？", "zh"),
    ("出差回来以后，报销需要哪些材料？", "zh"),
    ("我们几个项目想共用一套参数，有什么办法？", "zh"),  # (几个, "several"; 有什么办法 asks of the clause before it)
    ("灰度发布能不能按百分比放量，比如先放 10% 的实例？", "zh"),
    ("北京机房和上海机房的服务要连不同的地址，这个怎么配？", "zh"),  # (不同 is no comparison asked)
])
def test_a_question_that_asks_one_thing_has_no_parts(question, language):
    assert question_parts(question, language) == []


def test_the_scene_set_before_the_asks_is_searched_with_each_of_them():
    parts = question_parts("I'm pregnant and work in California: how much paid parental leave do I get, and how "
                           "long can disability leave last?", "en")
    assert [p.text for p in parts] == ["how much paid parental leave do I get", "how long can disability leave last?"]
    assert all(p.query.startswith("I'm pregnant and work in California:") for p in parts)
