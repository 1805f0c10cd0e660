import pytest
from hypothesis import given, settings, strategies as st

from rag.index.chunking import Chunker, ChunkingConfig
from rag.parsing.markdown import parse_markdown
from rag.words.text import sentence_spans
from rag.types import Block, ParsedDocument

ARTICLES = "\n\n".join(
    f"第{n}条 员工因公出差的，应当事先提出申请，经直属上级批准后方可预订交通和住宿。出差期间的伙食补助按照每人每天一百元的标准发放，"
    f"出发和返回当天各按五十元计算。超出标准的部分由员工个人承担，特殊情况须经部门负责人书面批准。"
    for n in range(1, 13)
)
LAW = f"# 差旅管理办法\n\n## 第一章 总则\n\n{ARTICLES}\n\n## 第二章 交通\n\n### 第一节 飞机\n\n第十三条 乘坐飞机一律为经济舱。\n"


def _doc(markdown: str, file: str = "policies/travel.md") -> ParsedDocument:
    blocks = parse_markdown(markdown)
    title = next(b.text for b in blocks if b.kind == "heading")
    return ParsedDocument(file=file, title=title, blocks=blocks, version="abc123", modified="2026-11-02")


def _check_invariants(doc: ParsedDocument, chunks, cfg: ChunkingConfig) -> None:
    text, _ = doc.render()
    boundaries = {a for a, _ in sentence_spans(text)} | {b for _, b in sentence_spans(text)}
    for chunk in chunks:
        assert chunk.text == text[chunk.start : chunk.end], "a chunk is an exact span of the parsed text"
        assert 0 < len(chunk.text) <= cfg.max_chars
        assert chunk.text == chunk.text.strip()
    by_section: dict = {}
    for chunk in chunks:
        by_section.setdefault(chunk.heading_path, []).append(chunk)
    for section_chunks in by_section.values():
        for prev, nxt in zip(section_chunks, section_chunks[1:]):
            overlap = prev.end - nxt.start
            assert overlap <= cfg.overlap_max, "overlap never exceeds the budget"
            assert nxt.end > prev.end, "every chunk makes progress"


def test_chinese_law_is_split_along_headings_with_overlap():
    cfg = ChunkingConfig()
    doc = _doc(LAW)
    chunks = Chunker(cfg).chunk(doc)
    _check_invariants(doc, chunks, cfg)
    paths = [c.heading_path for c in chunks]
    assert paths[0] == ("第一章 总则",)
    assert paths[-1] == ("第二章 交通", "第一节 飞机"), "the document title is not repeated in the path"
    chapter_one = [c for c in chunks if c.heading_path == ("第一章 总则",)]
    assert len(chapter_one) >= 3
    assert all(cfg.min_chars <= len(c.text) for c in chapter_one[:-1])
    overlaps = [a.end - b.start for a, b in zip(chapter_one, chapter_one[1:])]
    assert all(cfg.overlap_min <= o <= cfg.overlap_max for o in overlaps), overlaps
    for a, b in zip(chapter_one, chapter_one[1:]):
        assert b.text.startswith(a.text[len(a.text) - (a.end - b.start) :]), "overlap is the previous chunk's tail"
        assert b.text[0] not in "，、。；" , "chunks start at a sentence boundary"
    assert chunks[-1].text == "第十三条 乘坐飞机一律为经济舱。"
    assert all(c.file == "policies/travel.md" and c.title == "差旅管理办法" for c in chunks)
    assert all(c.doc_version == "abc123" and c.doc_date == "2026-11-02" for c in chunks)


def test_chunks_prefer_paragraph_boundaries():
    cfg = ChunkingConfig()
    chunks = Chunker(cfg).chunk(_doc(LAW))
    starts_of_articles = sum(1 for c in chunks if c.text.startswith("第"))
    assert starts_of_articles >= len(chunks) // 2


def test_a_single_sentence_longer_than_the_maximum_is_cut():
    long_sentence = "员工" + "、".join(f"事项{i}" for i in range(400)) + "。"
    cfg = ChunkingConfig()
    doc = _doc(f"# 规定\n\n{long_sentence}\n")
    chunks = Chunker(cfg).chunk(doc)
    _check_invariants(doc, chunks, cfg)
    assert len(chunks) >= 4


def test_ids_are_stable_and_unique():
    doc = _doc(LAW)
    first = [c.id for c in Chunker().chunk(doc)]
    again = [c.id for c in Chunker().chunk(_doc(LAW))]
    assert first == again
    assert len(set(first)) == len(first)
    edited = _doc(LAW.replace("第十三条 乘坐飞机一律为经济舱。", "第十三条 乘坐飞机一律为经济舱，另有规定的除外。"))
    edited_ids = [c.id for c in Chunker().chunk(edited)]
    assert edited_ids[:-1] == first[:-1], "editing one section keeps the other chunks' ids"
    assert edited_ids[-1] != first[-1]


def test_same_text_twice_gets_distinct_ids():
    chunks = Chunker().chunk(_doc("# T\n\n## A\n\nSame words here.\n\n## A\n\nSame words here.\n"))
    assert len(chunks) == 2 and chunks[0].id != chunks[1].id


def test_table_continuation_repeats_the_header():
    rows = "\n".join(f"| 2026-01-{d:02d} | Holiday number {d} with a long description | Closed |" for d in range(1, 29))
    doc = _doc(f"# Holidays\n\n| Date | Name | Status |\n|---|---|---|\n{rows}\n")
    chunks = Chunker().chunk(doc)
    assert len(chunks) > 1
    assert chunks[0].lead == ""
    assert all(c.lead == "| Date | Name | Status |\n|---|---|---|" for c in chunks[1:])
    assert all(c.text.startswith("| ") for c in chunks), "tables are cut between rows"
    assert "| Date | Name | Status |" in chunks[1].indexed_text


def test_a_long_code_block_is_cut_between_lines_and_each_later_part_leads_with_its_fence():
    lines = "\n".join(f"config.setProperty(\"apollo.key.{n}\", \"value number {n} of the demo\");" for n in range(30))
    doc = _doc(f"# Client\n\nSet the keys:\n\n```java\n{lines}\n```\n")
    chunks = Chunker().chunk(doc)
    assert len(chunks) > 2 and chunks[0].lead == ""
    assert all(c.lead == "```java" for c in chunks[1:])
    assert all(c.text.startswith("config.setProperty(") for c in chunks[1:]), "code is cut between its lines"
    assert chunks[-1].text.endswith("```")


def test_pages_are_recorded():
    blocks = [
        Block("heading", "Policy", level=1, page=1),
        Block("text", "A" * 150 + ".", page=1),
        Block("text", "B" * 150 + ".", page=2),
        Block("text", "C" * 150 + ".", page=3),
        Block("heading", "Scope", level=2, page=3),
        Block("text", "D" * 100 + ".", page=4),
    ]
    doc = ParsedDocument("p.pdf", "Policy", blocks, "v", "2026-01-01")
    chunks = Chunker().chunk(doc)
    assert [(c.page, c.page_end) for c in chunks] == [(1, 3), (4, 4)]


def test_config_is_checked():
    with pytest.raises(ValueError):
        ChunkingConfig(min_chars=700, max_chars=600)
    with pytest.raises(ValueError):
        ChunkingConfig(overlap_min=80, overlap_max=50)


_words = st.sampled_from(["报销", "员工", "出差", "travel", "policy", "meal", "经济舱", "123", "EUR"])
_sentence = st.builds(lambda ws, end: " ".join(ws) + end, st.lists(_words, min_size=1, max_size=60),
                      st.sampled_from(["。", "！", ". ", "？", "；", ""]))
_paragraph = st.builds("".join, st.lists(_sentence, min_size=1, max_size=8))
_section = st.builds(lambda h, ps: f"## {h}\n\n" + "\n\n".join(ps), _words, st.lists(_paragraph, min_size=1, max_size=6))


@settings(max_examples=60, deadline=None)
@given(st.lists(_section, min_size=1, max_size=4), st.integers(200, 500), st.integers(0, 40))
def test_invariants_hold_for_any_document(sections, min_chars, overlap_min):
    cfg = ChunkingConfig(min_chars=min_chars, max_chars=min_chars + 200, overlap_min=overlap_min, overlap_max=overlap_min + 50)
    doc = _doc("# Title\n\n" + "\n\n".join(sections))
    chunks = Chunker(cfg).chunk(doc)
    _check_invariants(doc, chunks, cfg)
    text, _ = doc.render()
    covered = set()
    for c in chunks:
        covered.update(range(c.start, c.end))
    body = {i for b, s in zip(doc.blocks, doc.render()[1]) if b.kind != "heading" for i in range(s, s + len(b.text)) if not text[i].isspace()}
    assert body <= covered, "no text is lost"
