"""Extractive answers on the sample handbook (the embedded default, real index): what gets quoted."""

from __future__ import annotations

import asyncio
import re

import pytest

from rag.knowledge_base import KnowledgeBase, make_pipeline
from rag.config import Settings
from rag.types import Answer
from tests.conftest import HANDBOOK, build


@pytest.fixture(scope="module")
def handbook(shared_data_dir, tmp_path_factory):
    index_dir = tmp_path_factory.mktemp("handbook-extractive")
    build(KnowledgeBase(Settings(data_dir=shared_data_dir, _env_file=None), index_dir), [HANDBOOK])
    return shared_data_dir, index_dir


def ask(handbook, question: str, **settings) -> Answer:
    data_dir, index_dir = handbook
    pipeline = make_pipeline(KnowledgeBase(Settings(data_dir=data_dir, _env_file=None, **settings), index_dir))

    async def run() -> Answer:
        async for item in pipeline.answer(question):
            if isinstance(item, Answer):
                return item
        raise AssertionError("no answer")

    return asyncio.run(run())


def quoted(answer: Answer) -> str:
    """The answer's quote lines as they read, markers and all."""
    return "\n".join(line for line in answer.text.splitlines() if line.startswith(">"))


def quotes(answer: Answer) -> list[str]:
    """The quoted excerpts, one per marker, lines joined."""
    excerpts, current = [], []
    for line in answer.text.splitlines()[1:]:
        if not line.startswith(">"):
            continue  # "From the English document …": introduces the quote below
        current.append(line.removeprefix("> ").removeprefix(">"))
        if re.search(r"\[\d+\]$", line):
            excerpts.append("\n".join(current))
            current = []
    return excerpts


def test_the_passage_that_answers_comes_first(handbook):
    answer = ask(handbook, "How many vacation days do I get per year?")
    first = quotes(answer)[0]
    assert "26 working days of paid annual leave per calendar year" in first and first.endswith("[1]")
    assert answer.citations[0].chunk.heading_path == ("Annual leave entitlement",)


def test_a_short_article_is_quoted_whole(handbook):
    answer = ask(handbook, "出差吃饭能报多少?")
    article = "第九条 出差期间按天发放伙食补助，标准为每人每天一百元；出发和返回当天各按五十元计算。伙食补助包干使用，无需提供餐饮发票。"
    assert quotes(answer)[0].startswith(article), "the whole article, first, nothing elided"
    assert "…" not in answer.text


def test_table_rows_are_quoted_with_their_column_headers(handbook):
    answer = ask(handbook, "When is the office closed in December?")
    table = next(q for q in quotes(answer) if "December closure" in q)
    lines = table.splitlines()
    assert lines[0] == "| Date | Holiday | Office | Notes |" and lines[1].startswith("|---")
    assert any(line.startswith("| 2026-12-24 | December closure | All offices |") for line in lines[2:])


def test_no_bare_table_fragment_or_cut_sentence_is_quoted(handbook):
    for question in ("How many days of annual leave do I get?", "How much does a parking permit cost per month?",
                     "Can I bring my dog to the office?", "What do I do if I lose my laptop?"):
        answer = ask(handbook, question)
        for excerpt in quotes(answer):
            body = re.sub(r"\s*\[\d+\]$", "", excerpt)
            last = body.splitlines()[-1]
            if last.startswith("|"):
                assert body.splitlines()[0].startswith("| ") and "|---" in body, (question, excerpt)
            elif not last.lstrip().startswith(("-", "•")):
                assert re.search(r"[.!?。！？)）\"”]$", last), (question, excerpt)


def test_what_the_handbook_never_mentions_is_refused_or_quoted_only_under_a_near_miss_warning(handbook):
    from rag.judging.extractive import NEAR_MISS

    refused = ask(handbook, "What is the capital of France?")
    assert refused.refused and refused.citations == [] and ">" not in refused.text
    answer = ask(handbook, "What is the capital of France?", gate_threshold=0.0)  # the gate lets it through
    # "France" is in no document of either language; "capital" is, translated: the China office's hotel rule
    # names its 省会城市 (provincial capitals), which the question now reaches through its translation.
    assert answer.text.splitlines()[0] == NEAR_MISS["en"].format(terms='"France"'), answer.text
    assert answer.near_miss == ["France"]


def test_at_most_three_units_are_quoted_and_each_cites_its_passage(handbook):
    for question in ("How long must a password be?", "出差吃饭能报多少?", "How many vacation days do I get per year?"):
        answer = ask(handbook, question)
        assert 1 <= len(quotes(answer)) <= 3
        for excerpt, check in zip(quotes(answer), [s for s in answer.sentences if s["outcome"] == "quote"]):
            cited = answer.citations[check["markers"][0] - 1].chunk
            first_line = excerpt.splitlines()[-1 if excerpt.startswith("|") else 0]
            assert re.sub(r"\s*\[\d+\]$", "", first_line)[:30] in " ".join(cited.text.split()), (question, excerpt)


def test_a_refusal_suggests_documents_only_when_they_are_related(handbook):
    strict = {"gate_threshold": 0.95}  # refuse everything, to see what each refusal suggests
    related = ask(handbook, "Are motorbikes reimbursed per kilometre?", **strict)
    assert related.refused and "You might look at:" in related.text
    assert [s.file for s in related.sources] == ["travel-expenses.md"]
    assert "Travel and Expense Policy › Transport › Private car (travel-expenses.md)" in related.text
    unrelated = ask(handbook, "What is the capital of France?", **strict)
    assert unrelated.refused and unrelated.sources == [] and "might look" not in unrelated.text


def _scored(source: int, start: int, text: str, kind: str, score: float, following: int | None = None):
    from rag.judging.evidence import ScoredUnit
    from rag.judging.quotable import Unit

    return ScoredUnit(Unit(source, start, start + len(text), text, kind, following), 1.0, 1.0, score, score)


@pytest.fixture(scope="module")
def idf(handbook):
    """The sample handbook's term weights: how its knowledge base weighs a question's words."""
    data_dir, index_dir = handbook
    snapshot = KnowledgeBase(Settings(data_dir=data_dir, _env_file=None), index_dir).retriever.snapshot
    return snapshot.term_weights()


def _worded(evidence, question: str, idf):
    """`evidence` whose units hold what a real unit of their text holds of `question` (under its passage's
    file, title and headings), as rag.judging.evidence measures it: the share of the question's key words it
    says (`said`; with its title and headings, translated: `said_under`) and of its words it holds translated
    (`translated`). The scores stay as the test sets them: they are what it arranges."""
    from rag.judging.evidence import gather_evidence
    from rag.types import SECTION_SEPARATOR, Chunk

    passages = []
    for n, scored in enumerate(evidence.units):
        file, context = evidence.sections[scored.unit.source]
        title, *headings = context.split(SECTION_SEPARATOR)
        text = scored.unit.text
        passages.append(Chunk(id=f"u{n}", file=file, title=title, heading_path=tuple(headings), text=text,
                              start=0, end=len(text), page=None, page_end=None, doc_version="",
                              doc_date="2026-01-01"))
    # (the cosines are the test's: the model's own would only order the units measured)
    measured = gather_evidence(question, passages, idf, lambda texts: [0.8] * len(texts))
    written = [evidence.languages[s.unit.source] for s in evidence.units]
    assert measured.languages == written, "each passage is in the language the test gives it"
    found = {s.unit.text: s for s in measured.units}
    for scored in evidence.units:
        real = found[scored.unit.text]
        scored.said, scored.said_under, scored.translated = real.said, real.said_under, real.translated
    return evidence


def test_no_more_than_three_sentences_are_quoted_and_articles_stay_whole():
    from rag.judging.evidence import Evidence
    from rag.judging.extractive import choose_quotes

    best = _scored(0, 0, "Permits are issued by the front desk.", "sentence", 0.90, following=1)
    follower = _scored(0, 38, "They cost ten euros a month.", "sentence", 0.50)
    two_sentences = _scored(1, 0, "Permits expire in March. Renew them online.", "paragraph", 0.89)
    one_more = _scored(2, 0, "Lost permits are replaced for free.", "sentence", 0.88)
    units = [best, two_sentences, one_more]
    evidence = Evidence(units, [best.unit, follower.unit, two_sentences.unit, one_more.unit])
    chosen = [[u.text for u in excerpt] for excerpt in choose_quotes(evidence)]
    assert chosen == [[best.unit.text, follower.unit.text], [one_more.unit.text]], \
        "the best sentence, its follower and the next one that fits: three sentences"

    long_paragraph = _scored(0, 0, "Permits are free. They last a year. Renew them in March. Ask HR.", "paragraph", 0.9)
    chosen = choose_quotes(Evidence([long_paragraph, one_more], [long_paragraph.unit, one_more.unit]))
    assert [[u.text for u in excerpt] for excerpt in chosen] == [[long_paragraph.unit.text]], "whole, and alone"

    article = _scored(0, 0, "第九条 标准为每人每天一百元。出发当天按五十元计算。返回当天按五十元计算。无需发票。", "paragraph", 0.9)
    other = _scored(1, 0, "第十条 住宿费按标准报销。超出部分自理。", "paragraph", 0.89)
    third = _scored(2, 0, "第十一条 交通费凭票报销。", "paragraph", 0.88)
    fourth = _scored(3, 0, "第十二条 市内交通包干。", "paragraph", 0.87)
    units = [article, other, third, fourth]
    chosen = choose_quotes(Evidence(units, [u.unit for u in units]))
    assert [[u.text for u in excerpt] for excerpt in chosen] == [[article.unit.text], [other.unit.text], [third.unit.text]], \
        "an article counts as one sentence of the budget: three whole articles"


def test_the_sentence_after_the_best_one_leaves_room_for_a_better_one_of_the_same_passage(idf):
    """"VPN 密码多久换一次": the minimum length scored best, the no-expiry rule of the same passage second; the
    passphrase advice after the minimum length would have filled the budget and kept the answer out."""
    from rag.judging.evidence import Evidence
    from rag.judging.extractive import choose_quotes

    best = _scored(0, 0, "Passwords must be at least 14 characters long.", "sentence", 0.856, following=1)
    follower = _scored(0, 47, "Use a passphrase of several unrelated words.", "sentence", 0.815)
    better = _scored(0, 92, "Store passwords in the manager. Passwords do not expire on a schedule.", "sentence",
                     0.852)
    elsewhere = _scored(1, 0, "Multi-factor authentication is mandatory for the VPN. Use the app.", "sentence",
                        0.852)

    def chosen(*units):
        for scored in units:
            scored.score = scored.cosine
        evidence = Evidence(list(units), [best.unit, follower.unit, better.unit, elsewhere.unit])
        return [[u.text for u in excerpt] for excerpt in choose_quotes(evidence)]

    assert chosen(best, better, follower) == [[best.unit.text], [better.unit.text]]
    # ... not for a runner-up of another passage, nor when the follower itself is the second best
    assert chosen(best, elsewhere, follower)[0] == [best.unit.text, follower.unit.text]
    follower.cosine = 0.853
    assert chosen(best, follower, better)[0] == [best.unit.text, follower.unit.text]
    # ... nor for one that would not fit anyway: three sentences beside the best one's
    longer = _scored(0, 92, "Store passwords in the manager. They do not expire. Change them when exposed.",
                     "sentence", 0.852)
    follower.cosine = 0.815
    evidence = Evidence([best, longer, follower], [best.unit, follower.unit, longer.unit])
    for scored in evidence.units:
        scored.score = scored.cosine
    assert choose_quotes(evidence)[0] == [best.unit, follower.unit]
    # ... nor for one the other language's answer, quoted first, leaves no room for (asked in English, its
    # 密码 says "password")
    chinese = _scored(1, 0, "密码无需定期更换。", "sentence", 0.850)
    for units in ([best, better, chinese, follower], [best, better, follower]):
        for scored in units:
            scored.score = scored.cosine
    evidence = Evidence([best, better, chinese, follower], [best.unit, follower.unit, better.unit, chinese.unit],
                        languages=["en", "zh"], sections=[("p.md", "Passwords"), ("z.md", "密码")])
    _worded(evidence, "How often must I change my VPN password?", idf)
    assert choose_quotes(evidence, confirmed=("zh",), asked="en")[:2] == [[best.unit, follower.unit],
                                                                          [chinese.unit]]


def test_the_other_languages_best_sentence_is_quoted_before_this_languages_runner_ups():
    """A knowledge base of both languages: the China office's rule is quoted beside the global one when it
    scores nearly as well — but not under a near-miss warning, where it answers no better. (A runner-up of
    the best one's own section comes first: the best one is read in its context.)"""
    from rag.judging.evidence import Evidence
    from rag.judging.extractive import choose_quotes

    best = _scored(0, 0, "第一条 员工出差须提交出差申请。", "paragraph", 0.896)
    runner = _scored(0, 20, "第二条 出境出差须经部门负责人批准。", "paragraph", 0.89)
    another = _scored(1, 0, "员工依法登记结婚的，享受婚假十天。", "paragraph", 0.887)
    english = _scored(2, 0, "Arrive at 9:30 at the reception desk on the ground floor.", "sentence", 0.873)
    units = [best, runner, another, english]
    languages = ["zh", "zh", "en"]
    sections = [("a.md", "出差审批"), ("a.md", "婚假"), ("b.md", "婚假")]

    def chosen(missing=()):
        evidence = Evidence(units, [u.unit for u in units], languages=languages, sections=sections, missing=missing)
        return [[u.text for u in excerpt] for excerpt in choose_quotes(evidence)]

    assert chosen() == [[best.unit.text, runner.unit.text], [english.unit.text]]
    assert english.unit.text not in str(chosen(missing=("入职",))), "a near miss quotes no other-language extra"


def test_the_other_languages_answer_is_quoted_past_a_full_budget_when_its_languages_gate_passed():
    """The other language's best sentence is quoted beside a best excerpt that already fills the three
    sentences (the global parental leave rule, then the China office's); where the gate read each
    language's evidence, only when that language's passed on its own model (`confirmed`): never a Chinese
    leave rule beside the English USB answer."""
    from rag.judging.evidence import Evidence
    from rag.judging.extractive import choose_quotes

    best = _scored(0, 0, "Birth mothers receive 20 weeks. Other parents receive 8 weeks. Blocks are allowed.",
                   "paragraph", 0.92)
    chinese = _scored(1, 0, "女员工生育享受产假一百五十八天；男员工享受陪产假十五天。", "paragraph", 0.91)
    units = [best, chinese]
    evidence = Evidence(units, [u.unit for u in units], languages=["en", "zh"],
                        sections=[("leave.docx", "Leave"), ("假.md", "假")])

    def chosen(confirmed):
        return [[u.text for u in excerpt] for excerpt in choose_quotes(evidence, confirmed=confirmed)]

    assert chosen(("zh",)) == [[best.unit.text], [chinese.unit.text]]
    assert chosen(()) == [[best.unit.text]], "the Chinese evidence failed its gate: nothing of it is quoted"
    assert chosen(None) == [[best.unit.text], [chinese.unit.text]], "not judged (a reranker decided): as close"


def test_a_runner_up_in_a_language_no_gate_vouched_for_is_not_quoted(idf):
    """An English question, an English answer, a Chinese rule as close by cosine in another section (the China
    office's lost-invoice rule beside the global policy's lost receipts): across languages the cosines sit
    too close together to vouch for it, so it is quoted only when the Chinese evidence passed its own gate —
    or when Chinese is the asker's language, whose cosines are exact."""
    from rag.judging.evidence import Evidence
    from rag.judging.extractive import choose_quotes

    best = _scored(0, 0, "Lost receipts can be replaced by a signed declaration up to twice per calendar "
                         "year.", "sentence", 0.85)
    chinese = _scored(1, 0, "第十五条 发票遗失的，员工可填写费用说明单。", "paragraph", 0.845)
    units = [best, chinese]
    evidence = Evidence(units, [u.unit for u in units], languages=["en", "zh"],
                        sections=[("travel-expenses.md", "Travel and Expense Policy › Claiming expenses › "
                                   "Receipts"), ("差旅报销制度.md", "中国区差旅报销制度 › 第五章 报销流程")])

    def chosen(confirmed, asked):
        _worded(evidence, {"en": "What if I lose a receipt?", "zh": "发票丢了怎么办？"}[asked], idf)
        return [[u.text for u in e] for e in choose_quotes(evidence, confirmed=confirmed, asked=asked, across=0)]

    assert chosen((), "en") == [[best.unit.text]]
    assert chosen(("zh",), "en") == [[best.unit.text], [chinese.unit.text]]
    assert chosen((), "zh") == [[best.unit.text], [chinese.unit.text]]


def test_an_other_language_rule_that_says_none_of_the_question_is_no_second_answer_where_its_gate_passed(idf):
    """"I lost my work computer": the IT policy's "Report any lost or stolen device" answers, holding one of
    the question's key words in three; the China office's lost-invoice rule, as close by cosine (遗失, "lost"),
    says none of them even translated, and is not quoted beside it where the Chinese evidence passed its
    gate."""
    from rag.judging.evidence import Evidence
    from rag.judging.extractive import choose_quotes

    best = _scored(0, 0, "Report any lost or stolen device immediately.", "sentence", 0.85)
    chinese = _scored(1, 0, "第十五条 发票遗失的，员工可填写费用说明单。", "paragraph", 0.845)
    evidence = _worded(Evidence([best, chinese], [best.unit, chinese.unit], languages=["en", "zh"],
                                sections=[("it-security-policy.pdf", "IT Security Policy › 4 Incidents"),
                                          ("差旅报销制度.md", "中国区差旅报销制度 › 第五章 报销流程")]),
                       "I lost my work computer", idf)
    assert 0 < best.said < 0.5 and chinese.said_under == chinese.translated == 0
    chosen = choose_quotes(evidence, confirmed=("zh",), asked="en", across=0)
    assert [[u.text for u in e] for e in chosen] == [[best.unit.text]]


def test_the_rule_a_quoted_signpost_names_comes_before_the_signpost(idf):
    """"Employees of the China office follow 年假与请假制度" names the other quoted document by its title: that
    document's quote answers and leads; the signpost stays, after it ("How long is maternity leave for the
    China office?")."""
    from rag.judging.evidence import Evidence
    from rag.judging.extractive import choose_quotes

    signpost = _scored(0, 0, "Employees of the China office follow 年假与请假制度.", "sentence", 0.85)
    rule = _scored(1, 0, "女员工生育享受产假一百五十八天。", "sentence", 0.84)

    def chosen(title: str) -> list[list[str]]:
        evidence = Evidence([signpost, rule], [signpost.unit, rule.unit], languages=["en", "zh"],
                            sections=[("leave.docx", "Annual Leave Policy"), ("leave.md", f"{title} › 三、产假")])
        _worded(evidence, "How long is maternity leave for the China office?", idf)
        return [[u.text for u in e] for e in choose_quotes(evidence, confirmed=("zh",), asked="en")]

    assert chosen("年假与请假制度") == [[rule.unit.text], [signpost.unit.text]]
    assert chosen("请假制度汇编") == [[signpost.unit.text], [rule.unit.text]], "a title it does not name"
    assert chosen("年假") == [[signpost.unit.text], [rule.unit.text]], "a title too short to name a document"


def test_a_quote_that_writes_the_name_asked_about_comes_before_one_that_writes_none(idf):
    """"In Shanghai, …": the China office's rule writes 上海, the global one other cities. (Asked of
    "accommodation", which its chapter 住宿费 says: the dictionary's "hotel" is 酒店 or 宾馆, and asked of a
    "hotel night" the China office's rule says none of the question's words.)"""
    from rag.judging.evidence import Evidence
    from rag.judging.extractive import choose_quotes

    best = _scored(0, 0, "Hotels are reimbursed up to 150 EUR per night in London and Paris.", "sentence",
                   0.874)
    china = _scored(1, 0, "第七条 北京、上海每晚不超过六百元。", "paragraph", 0.864)

    def chosen(names: dict[str, frozenset[str]], where: str) -> list[str]:
        evidence = Evidence([best, china], [best.unit, china.unit], languages=["en", "zh"],
                            sections=[("travel.md", "Travel"), ("差旅.md", "差旅报销制度 › 第三章 住宿费")],
                            names=names)
        _worded(evidence, f"How much accommodation is reimbursed per night{where}?", idf)
        return [e[0].text for e in choose_quotes(evidence, confirmed=("zh",), asked="en")]

    shanghai, london = frozenset({"shanghai", "上海"}), frozenset({"london", "伦敦"})
    assert chosen({"shanghai": shanghai}, " in Shanghai") == [china.unit.text, best.unit.text]
    assert chosen({"london": london}, " in London") == [best.unit.text, china.unit.text], \
        "the first writes a name asked about"
    assert chosen({"shanghai": shanghai, "2027": frozenset({"2027"})}, " in Shanghai in 2027") == \
        [best.unit.text, china.unit.text], "no quote writes every name"
    assert chosen({}, "") == [best.unit.text, china.unit.text]
    # ... only the other language's answer: not a runner-up of the best one's language that names the place
    row = _scored(2, 0, "| 2026-06-10 | Portugal Day | Lisbon | Closed |", "row", 0.872)
    evidence = Evidence([best, row], [best.unit, row.unit], languages=["en", "zh", "en"],
                        sections=[("travel.md", "Travel"), ("差旅.md", "差旅报销制度"),
                                  ("holidays.xlsx", "Holidays")],
                        names={"lisbon": frozenset({"lisbon", "里斯本"})})
    assert choose_quotes(evidence, asked="en")[0][0].text == best.unit.text


def test_a_chinese_quote_whose_words_say_the_english_question_leads_only_what_leads_by_score():
    """For an English question the Chinese excerpts are ordered with the words their English gloss holds
    (ScoredUnit.glossed); which sentences are quoted, and an order decided for another reason, stay."""
    from rag.judging.evidence import Evidence
    from rag.judging.extractive import choose_quotes

    def evidence(first_glossed: float, second_glossed: float, languages: list[str]) -> Evidence:
        first = _scored(0, 0, "第二十九条 债权人许可债务人转让部分债务的，保证人不再承担保证责任。", "paragraph", 0.880)
        second = _scored(1, 0, "第六百九十五条 协商变更主债权债务合同内容，加重债务的，保证人不承担责任。", "paragraph",
                         0.875)
        first.score, second.score = first.cosine, second.cosine
        first.glossed, second.glossed = first_glossed, second_glossed
        return Evidence([first, second], [first.unit, second.unit], languages=languages,
                        sections=[("担保法解释.md", "担保法解释"), ("合同编.md", "民法典")])

    def order(chosen: Evidence, asked: str = "en") -> list[str]:
        return [e[0].text[:6] for e in choose_quotes(chosen, asked=asked)]

    assert order(evidence(0.0, 0.0, ["zh", "zh"])) == ["第二十九条 ", "第六百九十五"]
    assert order(evidence(0.002, 0.010, ["zh", "zh"])) == ["第六百九十五", "第二十九条 "]
    assert order(evidence(0.002, 0.004, ["zh", "zh"])) == ["第二十九条 ", "第六百九十五"], "not enough"
    # a unit moved ahead of the best-scoring one for a reason of its own (the kind of answer asked, a denial)
    led = evidence(0.002, 0.010, ["zh", "zh"])
    led.units.reverse()
    assert order(led)[0] == "第六百九十五"
    led.units[0].glossed, led.units[1].glossed = 0.0, 0.010
    assert order(led) == ["第六百九十五", "第二十九条 "], "the first does not lead by score alone"


def test_an_other_language_quote_that_says_none_of_the_question_is_left_out_beside_a_loose_own_one():
    """A Chinese question answered loosely in Chinese (its quote holds few of the question's key words): an
    English team roster that the pool joined, saying none of them and translating none, is no second answer
    ("我们几个项目想共用一套参数，有什么办法？" quoted apollo's contributor table under "摘自英文文档《Apollo 团队》")."""
    from rag.judging.evidence import Evidence, ScoredUnit
    from rag.judging.extractive import _sounding_alike_left_out
    from rag.judging.quotable import Unit

    own = Unit(0, 0, 20, "几个项目之间共享的配置", "sentence")
    roster = Unit(1, 0, 30, "| GitHub ID | Name |\n|---|---|\n| jdoe | Jane Doe |", "row")
    evidence = Evidence([ScoredUnit(own, 1.0, 0.2, said=0.2, said_under=0.2),
                         ScoredUnit(roster, 0.0, 0.0, said=0.0, said_under=0.0, translated=0.0)],
                        languages=["zh", "en"])
    assert _sounding_alike_left_out([[own], [roster]], evidence, "zh") == [[own]]
    # ... while an English quote that says the question's words, translated, stays beside it
    evidence.units[1].said_under = 0.5
    assert _sounding_alike_left_out([[own], [roster]], evidence, "zh") == [[own], [roster]]
