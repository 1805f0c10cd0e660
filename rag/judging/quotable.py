"""What can be quoted from a passage: whole short paragraphs and list items (an article such as 第九条
stays whole), full sentences of longer ones, table rows together with their column headers, and each code
block whole, fenced (one that the passage starts inside of opens with the fence its lead repeats). A
paragraph of images alone says nothing to quote, nor does a navigation passage — a table of contents, a
sidebar (rag.judging.navigation): its links name pages, they answer nothing.

Paragraphs are separated by blank lines; a single line break inside one is a soft wrap (Markdown,
PDF text), so a quote never stops at the end of a wrapped line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from rag.words.text import FENCE, code_and_prose, hard_split, sentence_spans
from rag.types import Chunk

UnitKind = Literal["paragraph", "sentence", "row", "code"]

SHORT_PARAGRAPH = 200  # characters: a paragraph or list item up to this long is quoted whole
LONG_SENTENCE = 400  # a "sentence" longer than this is quoted clause by clause

_BLOCK = re.compile(r"[^\n](?:[^\n]|\n(?![ \t]*\n))*")  # text between blank lines
_SEPARATOR_ROW = re.compile(r"^\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$")
# The label of a statute's article ("第九条 …"): a number, not a word the question may share (第一天 is no 第一条).
ARTICLE = re.compile(r"^\s*第[一二三四五六七八九十百千零\d]+条")
LIST_ITEM = re.compile(r"^\s*(?:[-*+•]|\d{1,3}[.)]|[（(]?[一二三四五六七八九十\d]{1,3}[)）、])\s+")
_CJK = "\u3400-\u4dbf\u4e00-\u9fff\u3000-\u303f\uff00-\uffef"
_WRAP = re.compile(r"[ \t]*\n[ \t]*")
_IMAGE = re.compile(r"!\[[^\]]*\]\([^)]*\)")
_WORD = re.compile(r"\w")


@dataclass(frozen=True)
class Unit:
    source: int  # 0-based index into the passages it was cut from
    start: int  # span in the passage's text
    end: int
    text: str  # as it is quoted (a table row comes with its header lines; soft wraps joined)
    kind: UnitKind
    following: int | None = None  # index (in the same list) of the next sentence of its paragraph

    @property
    def matched_text(self) -> str:
        """The part that answers: for a row, the row itself (its header is context)."""
        return self.text.rsplit("\n", 1)[-1] if self.kind == "row" else self.text


def embedded_unit_text(chunk: Chunk, unit: Unit) -> str:
    """A unit of `chunk` as it is embedded: with its passage's title and headings, as passages are indexed."""
    return f"{chunk.context}\n{unit.matched_text}"


def quotable_units(chunk: Chunk, source: int, first_index: int = 0) -> list[Unit]:
    """The units of one passage; `following` counts from `first_index` (the list they are appended to)."""
    if chunk.navigation:
        return []
    units: list[Unit] = []
    header = _header_lines(chunk.lead)
    for start, end, fence in code_and_prose(chunk.text, chunk.lead):
        if fence is not None:
            units.append(_code_unit(chunk.text, start, end, fence, source))
            header = []
            continue
        for block in _BLOCK.finditer(chunk.text, start, end):
            lines = [(m.start() + block.start(), m.group(0)) for m in re.finditer(r"[^\n]+", block.group(0))]
            lines = [(at, line) for at, line in lines if line.strip() and not line.lstrip().startswith("#")]
            if lines and all(line.lstrip().startswith("|") for _, line in lines):
                units.extend(_table_units(lines, header, source))
            else:
                for item_start, item_end in _items(lines):
                    if _WORD.search(_IMAGE.sub("", chunk.text[item_start:item_end])):
                        units.extend(_paragraph_units(chunk.text, item_start, item_end, source,
                                                      first_index + len(units)))
            header = []
    return units


def _code_unit(text: str, start: int, end: int, fence: str, source: int) -> Unit:
    """A code block (or the part of it in the passage) as quoted: between its fences."""
    body = text[start:end].strip("\n")
    lines = body.split("\n")
    marks = fence[: len(fence) - len(fence.lstrip(fence[0]))]
    if not FENCE.match(lines[0]):
        lines.insert(0, fence)
    if len(lines) < 2 or not FENCE.match(lines[-1]) or len(lines[-1].strip()) > len(marks):
        lines.append(marks)
    return Unit(source, start, end, "\n".join(lines), "code")


def _table_units(lines: list[tuple[int, str]], header: list[str], source: int) -> list[Unit]:
    rows = [(at, line.strip()) for at, line in lines if not _SEPARATOR_ROW.match(line.strip())]
    if not header and rows:  # a table's first row is its header
        header = [rows[0][1], _separator_for(rows[0][1])]
        rows = rows[1:]
    return [Unit(source, at, at + len(row), "\n".join([*header, row]), "row") for at, row in rows]


def _items(lines: list[tuple[int, str]]) -> list[tuple[int, int]]:
    """Spans of the list items of a block (a line that does not start an item continues the last one),
    or of the whole block when it is not a list."""
    spans: list[tuple[int, int]] = []
    for at, line in lines:
        if not spans or LIST_ITEM.match(line):
            spans.append((at, at + len(line)))
        else:
            spans[-1] = (spans[-1][0], at + len(line))
    return spans


def _paragraph_units(text: str, start: int, end: int, source: int, offset: int) -> list[Unit]:
    if end - start <= SHORT_PARAGRAPH:
        return [Unit(source, start, end, _unwrap(text[start:end]), "paragraph")]
    flat = text[:end].replace("\n", " ")  # same offsets; a soft wrap does not end a sentence
    spans: list[tuple[int, int]] = []
    for s_start, s_end in sentence_spans(flat, start, end, clauses=False):
        if s_end - s_start > LONG_SENTENCE:
            for c_start, c_end in sentence_spans(flat, s_start, s_end):
                spans.extend(hard_split(flat, c_start, c_end, LONG_SENTENCE))
        else:
            spans.append((s_start, s_end))
    spans = [(a, b) for a, b in spans if len(text[a:b].strip()) >= 6]
    return [Unit(source, a, b, _unwrap(text[a:b]), "sentence", offset + n + 1 if n + 1 < len(spans) else None)
            for n, (a, b) in enumerate(spans)]


def _unwrap(text: str) -> str:
    """Join soft-wrapped lines: with a space between words, with nothing between Chinese characters."""
    def join(match: re.Match[str]) -> str:
        before, after = match.string[match.start() - 1 : match.start()], match.string[match.end() : match.end() + 1]
        return "" if re.match(f"[{_CJK}]", before) and re.match(f"[{_CJK}]", after) else " "

    return _WRAP.sub(join, text.strip())


def _header_lines(lead: str) -> list[str]:
    lines = [line.strip() for line in lead.splitlines() if line.strip().startswith("|")]
    return lines[:2] if len(lines) >= 2 and _SEPARATOR_ROW.match(lines[1]) else []


def _separator_for(row: str) -> str:
    cells = max(row.strip().strip("|").count("|") + 1, 1)
    return "|" + "---|" * cells
