"""The order of the scored units (rag.judging.evidence): which sentence an answer opens with."""

from __future__ import annotations

from rag.judging.evidence import SAYS_MORE, ScoredUnit, _saying_most_first
from rag.judging.negation import AS_CLOSE
from rag.judging.quotable import Unit


def scored(source: int, text: str, score: float, said: float) -> ScoredUnit:
    unit = ScoredUnit(Unit(source, 0, len(text), text, "paragraph", None), 0.0, 0.0, score, score, score)
    unit.said = said
    return unit


def texts(units: list[ScoredUnit]) -> list[str]:
    return [u.unit.text[:4] for u in units]


def test_a_unit_as_close_that_says_more_of_the_question_leads():
    approval = scored(0, "第二条 出差时间超过五个工作日的，还须经部门负责人批准。", 0.955, 0.53)
    claim = scored(1, "第十二条 员工应在出差结束后三十日内提交报销申请。", 0.952, 1.0)
    other = scored(2, "第九条 出差期间按天发放伙食补助。", 0.950, 0.53)
    zh = ["zh", "zh", "zh"]
    assert texts(_saying_most_first([approval, claim, other], zh)) == ["第十二条", "第二条 ", "第九条 "]
    # ... not one scoring further below the best, nor one saying only a little more
    far = scored(1, claim.unit.text, approval.score - AS_CLOSE - 0.001, 1.0)
    assert texts(_saying_most_first([approval, far, other], zh))[0] == "第二条 "
    little = scored(1, claim.unit.text, 0.952, approval.said + SAYS_MORE - 0.01)
    assert texts(_saying_most_first([approval, little, other], zh))[0] == "第二条 "
    # ... nor one as close by score that its shared words lift, further from the question in meaning
    lifted = scored(1, claim.unit.text, 0.952, 1.0)
    lifted.cosine = approval.cosine - AS_CLOSE - 0.005
    assert texts(_saying_most_first([approval, lifted, other], zh))[0] == "第二条 "
    # ... nor one in another language than the best one's (its key words are counted in this one)
    assert texts(_saying_most_first([approval, claim, other], ["zh", "en", "zh"]))[0] == "第二条 "


def test_an_order_decided_for_another_reason_stays():
    # the first unit was moved ahead of a better-scoring one (a denial, the kind of answer asked)
    approval = scored(0, "第二条 出差时间超过五个工作日的，还须经部门负责人批准。", 0.950, 0.53)
    claim = scored(1, "第十二条 员工应在出差结束后三十日内提交报销申请。", 0.955, 1.0)
    units = [approval, claim]
    assert _saying_most_first(units, ["zh", "zh"]) == units
