"""Turn MinerU's content list (any tier, any version) into Blocks with pages, heading levels and tables."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from typing import Any

from rag.types import Block

_EMPHASIS = re.compile(r"(\*\*|__)(.+?)\1")
_DIGITS = re.compile(r"\d+")
_RUNNING_TYPES = {"header", "footer"}
_DROPPED_TYPES = {"page_number", "page_footnote", "aside_text", "discarded"}

# Numbering styles that reveal a heading's depth when the parser reports every heading at one level.
_CN_NUM = "一二三四五六七八九十百零〇两"
_NUMBERED_LEVELS: list[tuple[re.Pattern[str], int | None]] = [
    (re.compile(rf"^第[{_CN_NUM}\d]+[编篇部]"), 1),
    (re.compile(rf"^第[{_CN_NUM}\d]+章"), 2),
    (re.compile(rf"^第[{_CN_NUM}\d]+节"), 3),
    (re.compile(rf"^[{_CN_NUM}]+、"), 3),
    (re.compile(rf"^[（(][{_CN_NUM}]+[)）]"), 4),
    (re.compile(r"^\d+(?:\.\d+)*\.?(?=\s|[A-Za-z\u4e00-\u9fff])"), None),  # 1 / 1.2 / 1.2.3 → depth
    (re.compile(r"^(?:chapter|part)\s+\w+", re.IGNORECASE), 2),
    (re.compile(r"^(?:section)\s+\w+", re.IGNORECASE), 3),
]


def content_list_to_blocks(items: list[dict[str, Any]], paged: bool) -> list[Block]:
    """Blocks from MinerU content-list items (`type`, `text`, `text_level`, `page_idx`, `table_body`…)."""
    running = _running_texts(items)
    blocks: list[Block] = []
    for item in items:
        kind = item.get("type", "text")
        page = int(item["page_idx"]) + 1 if paged and item.get("page_idx") is not None else None
        if kind in _DROPPED_TYPES:
            continue
        if kind in _RUNNING_TYPES:
            # Running headers repeat on every page; a "header" seen once is usually the page's
            # first real line misclassified, so keep it as text rather than lose it.
            text = _clean(item.get("text", ""))
            if text and _shape(text) not in running:
                blocks.append(Block("text", text, page=page))
            continue
        if kind == "text" and item.get("text_level"):
            text = _clean(_EMPHASIS.sub(r"\2", item.get("text", "")))
            if text:
                blocks.append(Block("heading", text, level=int(item["text_level"]), page=page))
        elif kind == "table":
            blocks.extend(_table_blocks(item, page))
        elif kind == "list":
            text = "\n".join(_clean(x) for x in item.get("list_items", []) if _clean(x))
            if text:
                blocks.append(Block("text", text, page=page))
        elif kind in ("image", "chart"):
            parts = [*item.get("image_caption", []), item.get("content", ""), *item.get("image_footnote", [])]
            text = "\n".join(_clean(p) for p in parts if isinstance(p, str) and _clean(p))
            if text:
                blocks.append(Block("text", text, page=page))
        elif kind == "code":
            text = item.get("code_body", "") or item.get("text", "")
            if text.strip():
                blocks.append(Block("text", text.strip("\n"), page=page))
        else:
            text = _clean(item.get("text", ""))
            if text:
                blocks.append(Block("text", text, page=page))
    return blocks


def infer_heading_levels(blocks: list[Block]) -> list[Block]:
    """Refine flat heading levels from numbering (`1.2`, `第二章`, `（一）`…), keeping the title on top."""
    levels = {b.level for b in blocks if b.kind == "heading"}
    if len(levels) > 2:
        return blocks  # the parser already reported a hierarchy
    flat = max(levels, default=0)
    refined: list[Block] = []
    for block in blocks:
        # MinerU puts its title guess (often just the first heading) above the rest: a numbered heading
        # there is a section like its siblings ("2. Client dinners" beside "3. Mileage"), not a title.
        if block.kind == "heading" and (block.level == flat or _numbered_depth(block.text) is not None):
            depth = _numbered_depth(block.text)
            if depth is not None:
                block = Block("heading", block.text, level=flat + depth - 1, page=block.page)
        refined.append(block)
    return refined


def _numbered_depth(text: str) -> int | None:
    for pattern, depth in _NUMBERED_LEVELS:
        match = pattern.match(text.strip())
        if match:
            if depth is None:
                return match.group(0).rstrip(".").count(".") + 1
            return depth
    return None


def _running_texts(items: list[dict[str, Any]]) -> set[str]:
    """Header/footer texts (digits ignored) that appear on more than one page."""
    pages: dict[str, set[Any]] = {}
    for item in items:
        if item.get("type") in _RUNNING_TYPES:
            pages.setdefault(_shape(item.get("text", "")), set()).add(item.get("page_idx"))
    return {shape for shape, seen in pages.items() if len(seen) > 1}


def _shape(text: str) -> str:
    return _DIGITS.sub("#", _clean(text))


def _clean(text: str) -> str:
    return re.sub(r"[ \t]+", " ", text or "").strip()


def _table_blocks(item: dict[str, Any], page: int | None) -> list[Block]:
    blocks: list[Block] = []
    caption = " ".join(_clean(c) for c in item.get("table_caption", []) if _clean(c))
    if caption:
        blocks.append(Block("text", caption, page=page))
    body = item.get("table_body") or ""
    table = html_table_to_markdown(body) if "<t" in body.lower() else body.strip()
    if table:
        blocks.append(Block("table", table, page=page, rows=tuple(item.get("rows") or ())))  # rag.parsing.sheets
    footnote = " ".join(_clean(c) for c in item.get("table_footnote", []) if _clean(c))
    if footnote:
        blocks.append(Block("text", footnote, page=page))
    return blocks


class _TableReader(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.rows: list[list[str]] = []
        self._cell: list[str] | None = None
        self._colspans: list[int] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th"):
            self._cell = []
            span = dict(attrs).get("colspan") or "1"
            self._colspans.append(int(span) if span.isdigit() else 1)
        elif tag == "br" and self._cell is not None:
            self._cell.append(" ")

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None:
            if not self.rows:
                self.rows.append([])
            text = _clean("".join(self._cell)).replace("|", "\\|")
            span = self._colspans.pop() if self._colspans else 1
            self.rows[-1].extend([text] + [""] * (span - 1))
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def html_table_to_markdown(html: str) -> str:
    reader = _TableReader()
    reader.feed(html)
    rows = [r for r in reader.rows if any(cell for cell in r)]
    if not rows:
        return ""
    width = max(len(r) for r in rows)
    rows = [r + [""] * (width - len(r)) for r in rows]
    lines = ["| " + " | ".join(rows[0]) + " |", "|" + "---|" * width]
    lines += ["| " + " | ".join(r) + " |" for r in rows[1:]]
    return "\n".join(lines)


def document_title(blocks: list[Block]) -> str | None:
    """The title the document opens with: its top heading before any text, unless numbered (a section)."""
    opening: list[Block] = []
    for block in blocks:
        if block.kind != "heading":
            break
        opening.append(block)
    titles = [b for b in opening if _numbered_depth(b.text) is None]
    if not titles:
        return None
    top = min(b.level for b in titles)
    return next(b.text for b in titles if b.level == top)
