"""The knowledge base's own words for a question's words it never uses (rag.words.synonyms), on a real BM25 index."""

from __future__ import annotations

from rag.index.lexical_index import LexicalIndex
from rag.words.lexical import tokenize
from rag.words.synonyms import expanded, round_trip, synonyms, written_apart

GUIDE = [
    "Bicycle parking and showers are available on the ground floor without booking.",
    "Taxis are reimbursed for trips to and from airports.",
    "国有企业的员工出差须经批准。",
    "The offices are open from 7:00 to 21:00 on working days.",
]


def idf_of(texts: list[str]):
    return LexicalIndex.build([tokenize(t) for t in texts]).idf


def test_a_word_the_guide_never_uses_finds_the_guides_own_word():
    idf = idf_of(GUIDE)
    assert synonyms("Where can I leave my bike?", idf) == {"bike": ("bicycl",)}
    assert synonyms("Can I expense a cab to the airport?", idf) == {"cab": ("taxi",)}
    assert synonyms("国企员工出差要批准吗？", idf) == {"国企": tuple(tokenize("国有企业"))}


def test_a_word_the_guide_uses_is_not_looked_up():
    idf = idf_of(GUIDE + ["Bike racks are behind the building."])
    assert "bike" not in synonyms("Where can I leave my bike?", idf)


def test_a_synonym_the_guide_does_not_use_is_not_kept():
    assert synonyms("Where can I leave my bike?", idf_of(GUIDE[1:])) == {}


def test_how_a_question_asks_is_never_looked_up():
    idf = idf_of(GUIDE + ["每个时间段都可以。"])
    assert synonyms("办公室几点关门？", idf) == {}


def test_single_characters_and_phrases_do_not_lead_astray():
    """"fitness" reaches English only through single characters (合: "peck"); 年终奖's "year-end bonus"
    is no 每年 (every year)."""
    assert round_trip("fitness", "en") == ()
    assert round_trip("年终奖", "zh") == ()
    assert "bicycle" in round_trip("bike", "en")


def test_a_number_is_no_word_for_a_name():
    """国庆节 ("PRC National Day") is also 十一, "October 1st": a guide writes 十一 in every date and article
    number (三月三十一日, 第十一条), and the carry-over rule held it for "国庆节放几天假？"."""
    idf = idf_of(GUIDE + ["当年未休完的年假可顺延至次年三月三十一日。", "| 2026-10-01 | National Day | Closed |"])
    assert "十一" not in round_trip("国庆节", "zh")
    assert synonyms("国庆节放几天假？", idf) == {}


def test_a_part_of_a_compound_does_not_stand_for_it():
    """电脑 comes back from English as 计算机 ("computer"); a guide that writes only 计算 — "calculate", as in
    按五十元计算 — does not mention computers. Nor is 计算 ("to compute") a word for "computer" itself."""
    idf = idf_of(GUIDE + ["第九条 出发和返回当天各按五十元计算。"])
    assert synonyms("电脑坏了找谁？", idf) == {}
    assert "计算" not in round_trip("电脑", "zh")
    assert "计算机" in round_trip("电脑", "zh")


def test_a_verb_that_says_little_leaves_its_object_to_be_found():
    """打车 is "take a taxi", which only 打的 translates whole and the guide never says; its object, "taxi",
    is the guide's 出租车 — taken because 打车 itself names it (车). 上任 ("take office") names no office."""
    idf = idf_of(GUIDE + ["第六条 前往机场的，可乘坐出租车，凭发票报销。"])
    assert synonyms("打车能报销吗？", idf) == {"打车": tuple(tokenize("出租车"))}
    assert "办公室" not in round_trip("上任", "zh")


def test_bm25_finds_the_passage_by_the_synonym():
    index = LexicalIndex.build([tokenize(t) for t in GUIDE])
    question = "Where can I leave my bike?"
    before = index.scores(tokenize(question))
    assert before is None or before.max() == 0
    scores = index.scores(tokenize(expanded(question, index.idf)))
    assert int(scores.argmax()) == 0 and scores[0] > 0


def test_a_british_spelling_finds_the_guides_american_one():
    """A guide written in American English: "centre" and "labour" are words it never uses, "center" and
    "labor" its own (BM25 matches spellings, not words)."""
    guide = GUIDE + ["The fitness center on the second floor opens at 6:00.",
                     "Labor law questions go to the HR business partner."]
    index = LexicalIndex.build([tokenize(t) for t in guide])
    assert synonyms("When does the fitness centre open?", index.idf) == {"centre": ("center",)}
    assert synonyms("Who answers labour law questions?", index.idf) == {"labour": ("labor",)}
    scores = index.scores(tokenize(expanded("Is there a centre?", index.idf)))
    assert scores is not None and int(scores.argmax()) == len(GUIDE)
    assert synonyms("Is there a fence?", index.idf) == {}  # no British spelling, no synonym the guide uses


def test_a_compounds_parts_are_searched_once():
    """BM25 tokenises the expanded question again: 国有企业 brings 国有 and 企业 back, so they are not appended
    a second time (which doubled their weight)."""
    idf = idf_of(GUIDE)
    question = "国企员工出差要批准吗？"
    added = tokenize(expanded(question, idf))[len(tokenize(question)):]
    assert sorted(added) == sorted(tokenize("国有企业"))
    assert len(added) == len(set(added)), added


def test_workplace_shorthand_finds_the_plain_words_the_guide_uses():
    """"PTO", "WFH", "NYC": what people type, which policies spell out (rag.words.jargon)."""
    idf = idf_of(GUIDE + ["Full-time employees receive 26 working days of paid annual leave.",
                          "Employees who work from home receive a home office allowance.",
                          "Hotels are reimbursed up to 220 EUR per night in London and New York."])
    found = synonyms("How much PTO do I get? Can I WFH? What about NYC?", idf)
    assert set(found["PTO"]) == set(tokenize("annual leave"))
    assert set(found["WFH"]) == set(tokenize("work home office"))
    assert set(found["NYC"]) == set(tokenize("new york"))
    assert "PTO" not in synonyms("How much PTO do I get?", idf_of(GUIDE)), "only words the guide uses"


def test_shorthand_the_guide_writes_itself_is_searched_as_written():
    idf = idf_of(GUIDE + ["PTO requests go through the HR portal.", "Paid annual leave is 26 days."])
    assert "PTO" not in synonyms("How much PTO do I get?", idf)


def test_a_verb_written_apart_is_the_askers_word():
    """请几天假 is 请假 with a count inside: the guide's 请假, which no tokenizer sees in the question."""
    assert written_apart("家里有事能请几天假？") == ["请假"]
    assert written_apart("我想请三天假") == ["请假"] and written_apart("请了假") == ["请假"]
    assert written_apart("放几天假？") == ["放假"]


def test_characters_of_other_words_are_no_verb_written_apart():
    """请问 and 年假 hold 请 and 假, and 没休完的年假 休 and 假: none of them is 请假 or 休假."""
    assert written_apart("请问年假有几天？") == []
    assert written_apart("没休完的年假能留到明年吗？") == []
    assert written_apart("请假要提前几天？") == []  # written whole: the tokenizer's word already


def test_a_verb_written_apart_weighs_and_is_searched_when_the_guide_uses_it():
    idf = idf_of(GUIDE + ["员工因私事需要请假的，须提前一个工作日申请。"])
    assert synonyms("家里有事能请几天假？", idf)["请假"] == ("请假",)
    assert "请假" in expanded("家里有事能请几天假？", idf).split()
    assert "请假" not in synonyms("家里有事能请几天假？", idf_of(GUIDE))  # a guide that never says it
