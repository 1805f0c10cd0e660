"""Heading-aware chunking: sections, then paragraphs, then sentences, with sentence-aligned overlap."""

from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import dataclass
from typing import NamedTuple

from rag.words.text import hard_split, sentence_spans
from rag.types import Chunk, ParsedDocument, collection_of


# Bump when a change to parsing or chunking code changes chunk boundaries: forces re-chunking.
# 3: a spreadsheet's passages carry their sheet (as a heading) and rows; 4: Markdown read by its structure
# (an HTML block as its text, a fenced code block cut between lines)
CHUNKER_VERSION = 4


@dataclass(frozen=True)
class ChunkingConfig:
    min_chars: int = 300
    max_chars: int = 600
    overlap_min: int = 50
    overlap_max: int = 100

    def __post_init__(self) -> None:
        if not 0 < self.min_chars <= self.max_chars:
            raise ValueError(f"need 0 < min_chars <= max_chars, got {self.min_chars}, {self.max_chars}")
        if not 0 <= self.overlap_min <= self.overlap_max < self.min_chars:
            raise ValueError("need 0 <= overlap_min <= overlap_max < min_chars")


@dataclass(frozen=True)
class _Unit:
    """A sentence (or a piece of an over-long one): the smallest thing a chunk boundary may fall on."""

    start: int
    end: int
    page: int | None
    opens_paragraph: bool
    # what a chunk starting here opens with as its lead: a table's header rows above a row below them, a code
    # block's opening fence above a line of it
    lead: str = ""
    row: int | None = None  # a spreadsheet's table row: its number in the sheet


class _Span(NamedTuple):
    """What one chunk takes of the document."""

    start: int
    end: int
    page: int | None
    page_end: int | None
    lead: str
    row: int | None
    row_end: int | None


@dataclass
class _Section:
    heading_path: tuple[str, ...]
    units: list[_Unit]


class Chunker:
    def __init__(self, config: ChunkingConfig | None = None) -> None:
        self.config = config or ChunkingConfig()

    def chunk(self, doc: ParsedDocument) -> list[Chunk]:
        text, starts = doc.render()
        chunks: list[Chunk] = []
        seen: Counter[tuple[tuple[str, ...], str]] = Counter()
        for section in self._sections(doc, text, starts):
            for span in self._pack(text, section.units):
                body = text[span.start:span.end]
                key = (section.heading_path, body)
                chunk_id = _chunk_id(doc.file, section.heading_path, body, seen[key])
                seen[key] += 1
                chunks.append(
                    Chunk(
                        id=chunk_id,
                        file=doc.file,
                        title=doc.title,
                        heading_path=section.heading_path,
                        text=body,
                        start=span.start,
                        end=span.end,
                        page=span.page,
                        page_end=span.page_end,
                        doc_version=doc.version,
                        doc_date=doc.modified,
                        url=doc.url,
                        lead=span.lead,
                        collection=doc.collection or collection_of(doc.file),
                        access=doc.access,
                        row=span.row,
                        row_end=span.row_end,
                    )
                )
        return chunks

    def _sections(self, doc: ParsedDocument, text: str, starts: list[int]) -> list[_Section]:
        sections: list[_Section] = []
        stack: list[tuple[int, str]] = []
        current = _Section(doc.headings, [])
        for block, start in zip(doc.blocks, starts):
            if block.kind == "heading":
                if current.units:
                    sections.append(current)
                while stack and stack[-1][0] >= block.level:
                    stack.pop()
                stack.append((block.level, block.text.strip()))
                titles = {doc.title, doc.title_heading}  # the document's name is not a section of it
                path = tuple(title for _, title in stack if title and title not in titles)
                current = _Section(doc.headings + path, [])
                continue
            end = start + len(block.text)
            if block.kind == "table":
                current.units.extend(self._table_units(text, start, end, block.page, block.rows))
            elif block.kind == "code":
                current.units.extend(self._code_units(text, start, end, block.page))
            else:
                current.units.extend(self._units(text, start, end, block.page))
        if current.units:
            sections.append(current)
        return sections

    def _units(self, text: str, start: int, end: int, page: int | None) -> list[_Unit]:
        units: list[_Unit] = []
        for s_start, s_end in sentence_spans(text, start, end):
            for p_start, p_end in hard_split(text, s_start, s_end, self.config.max_chars):
                p_start, p_end = _strip(text, p_start, p_end)
                if p_end > p_start:
                    units.append(_Unit(p_start, p_end, page, opens_paragraph=not units))
        return units

    def _table_units(self, text: str, start: int, end: int, page: int | None,
                     numbers: tuple[int, ...] = ()) -> list[_Unit]:
        """One unit per row; rows after the header carry it so a table split across chunks stays readable.
        `numbers`: a spreadsheet's, each row's number in its sheet (the header's rule has none)."""
        rows: list[tuple[int, int]] = []
        pos = start
        for line in text[start:end].split("\n"):
            rows.append((pos, pos + len(line)))
            pos += len(line) + 1
        header_rows = 2 if len(rows) > 2 and set(text[rows[1][0] : rows[1][1]]) <= set("|-: ") else 1
        header = text[rows[0][0] : rows[header_rows - 1][1]]
        lines = [n for n in range(len(rows)) if not (header_rows == 2 and n == 1)]  # the rule is no row
        number = dict(zip(lines, numbers)) if len(numbers) == len(lines) else {}
        units = []
        for n, (r_start, r_end) in enumerate(rows):
            for p_start, p_end in hard_split(text, r_start, r_end, self.config.max_chars):
                units.append(_Unit(p_start, p_end, page, n == 0, header if n >= header_rows else "", number.get(n)))
        return units

    def _code_units(self, text: str, start: int, end: int, page: int | None) -> list[_Unit]:
        """One unit per line of code (a full stop in `java.version` ends nothing); the lines after the opening
        fence carry it, so a block cut across chunks stays code."""
        fence = text[start : text.find("\n", start, end) if "\n" in text[start:end] else end]
        units: list[_Unit] = []
        pos = start
        for line in text[start:end].split("\n"):
            for p_start, p_end in hard_split(text, pos, pos + len(line), self.config.max_chars):
                p_start, p_end = _strip(text, p_start, p_end)
                if p_end > p_start:
                    units.append(_Unit(p_start, p_end, page, not units, fence if units else ""))
            pos += len(line) + 1
        return units

    def _pack(self, text: str, units: list[_Unit]) -> list[_Span]:
        cfg = self.config
        spans: list[_Span] = []
        i, n = 0, len(units)
        fresh = 0  # first unit not yet in any chunk: each chunk must take at least one
        while i < n:
            remaining = units[-1].end - units[i].start
            limit = cfg.max_chars
            if cfg.max_chars < remaining < cfg.max_chars + cfg.min_chars:
                # Split what is left in two similar halves instead of leaving a tiny tail.
                limit = max(cfg.min_chars, (remaining + cfg.overlap_max) // 2)
            j = max(i, fresh) + 1
            while j < n and units[j].end - units[i].start <= limit:
                j += 1
            if j < n:
                for k in range(j - 1, max(i, fresh), -1):
                    if units[k].opens_paragraph and units[k - 1].end - units[i].start >= cfg.min_chars:
                        j = k
                        break
            numbered = [u.row for u in units[i:j] if u.row is not None]
            spans.append(_Span(units[i].start, units[j - 1].end, units[i].page, units[j - 1].page,
                               units[i].lead, numbered[0] if numbered else None,
                               numbered[-1] if numbered else None))
            if j >= n:
                break
            fresh = j
            i = self._overlap_start(units, i, j)
        return spans

    def _overlap_start(self, units: list[_Unit], first: int, stop: int) -> int:
        """First unit of the next chunk: whole trailing sentences of this one, within the overlap budget."""
        cfg = self.config
        k = stop
        while (
            k - 1 > first
            and units[stop - 1].end - units[k - 1].start <= cfg.overlap_max
            and units[stop].end - units[k - 1].start <= cfg.max_chars
        ):
            k -= 1
        return k


def _strip(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def _chunk_id(file: str, heading_path: tuple[str, ...], body: str, occurrence: int) -> str:
    key = "\x1f".join((file, *heading_path, body, str(occurrence)))
    return hashlib.sha256(key.encode("utf-8")).hexdigest()[:20]
