"""Markdown and plain text: `#` headings are the structure, blank lines separate paragraphs."""

from __future__ import annotations

import re

from markdown_it import MarkdownIt
from markdown_it.token import Token

from rag.parsing.markup import highlights_fenced, html_blocks, readable
from rag.types import Block

_FRONT_MATTER = re.compile(r"\A(?:[ \t]*\n)*---[ \t]*\n(.*?)\n---[ \t]*(?:\n|\Z)", re.DOTALL)
# An opening `---` with an `access:` key below it in the same paragraph, never closed
_UNCLOSED_ACCESS = re.compile(r"\A(?:[ \t]*\n)*---[ \t]*\n(?:[^\n]*\S[^\n]*\n)*?[ \t]*access[ \t]*:",
                              re.IGNORECASE)
_FRONT_MATTER_LINE = re.compile(r"^([A-Za-z_][\w-]*)\s*:\s*(.*?)\s*$")
_FRONT_MATTER_ITEM = re.compile(r"^\s*-\s+(.*?)\s*$")
HTML_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
_TABLE_ROW = re.compile(r"^\s*\|.*\|\s*$")
_QUOTE_MARK = re.compile(r"^ {0,3}> ?")
# CommonMark with GFM tables; an indented block is no code block (plain text files indent their paragraphs)
_MARKDOWN = MarkdownIt("commonmark").enable("table").disable("code")
_LEAVES = {"heading_open", "fence", "html_block", "table_open", "hr"}


class FrontMatterError(ValueError):
    """Front matter that names an access list but cannot be read."""


def split_front_matter(source: str) -> tuple[dict[str, str], str]:
    """YAML-style `key: value` front matter (flat keys; a block list `- item` under a key becomes
    `item, item`) and the body after it."""
    source = source.replace("\r\n", "\n").replace("\r", "\n")  # saved on Windows: the same front matter
    match = _FRONT_MATTER.match(source)
    if not match:
        if _UNCLOSED_ACCESS.match(source):  # read as text, the document would be everyone's
            raise FrontMatterError("its front matter names an access list but is not closed by a `---` line")
        return {}, source
    meta: dict[str, str] = {}
    key = None
    for line in match.group(1).splitlines():
        kv = _FRONT_MATTER_LINE.match(line)
        item = _FRONT_MATTER_ITEM.match(line)
        if kv:
            key = kv.group(1).lower()
            meta[key] = kv.group(2).strip("'\"")
        elif item and key is not None:
            meta[key] = ", ".join(v for v in (meta[key], item.group(1).strip("'\"")) if v)
    return meta, source[match.end() :]


def parse_markdown(source: str, page: int | None = None) -> list[Block]:
    """Blocks of a Markdown (or plain text) body, in order, as markdown-it reads its structure: headings,
    paragraphs, lists and block quotes as written (Markdown's own marks kept), tables as
    Markdown tables, fenced code as code, and HTML blocks as the text they show (rag.parsing.markup). Prose
    loses its inline HTML tags, template directives and character entities; an indented block is prose, as
    in the plain text files read here."""
    source = highlights_fenced(HTML_COMMENT.sub("", source.replace("\r\n", "\n").replace("\r", "\n")))
    lines = source.split("\n")
    tokens = _MARKDOWN.parse(source)
    quoted = [0] * len(lines)  # how many block quotes each line is in
    leaves: dict[int, int] = {}  # first line -> the token of a heading, table, code or HTML block there
    tags: set[str] = set()  # inline HTML, as written
    for n, token in enumerate(tokens):
        if token.type == "blockquote_open" and token.map:
            for line in range(*token.map):
                quoted[line] += 1
        elif token.type in _LEAVES and token.map:
            leaves.setdefault(token.map[0], n)
        elif token.type == "inline":
            tags.update(child.content for child in token.children or () if child.type == "html_inline")
    blocks: list[Block] = []
    paragraph: list[str] = []

    def flush() -> None:
        text = readable("\n".join(paragraph), tags)
        paragraph.clear()
        text = "\n".join(line.rstrip() for line in text.split("\n") if line.strip()).strip()
        if text:
            blocks.append(Block("table" if _is_table(text) else "text", text, page=page))

    at = 0
    while at < len(lines):
        if at in leaves:
            flush()
            end = max(tokens[leaves[at]].map[1], at + 1)
            written = [_unquoted(line, depth) for line, depth in zip(lines[at:end], quoted[at:end])]
            blocks.extend(_leaf(tokens, leaves[at], tags, written, page))
            at = end
            continue
        line = lines[at]  # as written, block-quote marks too: so it is found in the file
        if paragraph and bool(_TABLE_ROW.match(line)) != bool(_TABLE_ROW.match(paragraph[-1])):
            flush()  # rows of pipes directly after prose (or prose after them) are a block of their own
        if line.strip():
            paragraph.append(line.rstrip())
        else:
            flush()
        at += 1
    flush()
    return blocks


def _leaf(tokens: list[Token], n: int, tags: set[str], written: list[str], page: int | None) -> list[Block]:
    """The blocks of the heading, table, code or HTML block that opens with token `n` (`written`: its lines)."""
    token = tokens[n]
    if token.type == "heading_open":
        title = readable(tokens[n + 1].content, tags).strip()
        return [Block("heading", title, level=int(token.tag[1]), page=page)] if title else []
    if token.type == "fence":
        return [Block("code", f"{token.markup}{token.info}\n{token.content}{token.markup}", page=page)]
    if token.type == "html_block":
        return html_blocks(token.content, page)
    if token.type == "table_open":
        if all(_TABLE_ROW.match(line) for line in written):  # as written, so it is found in the file
            return [Block("table", "\n".join(readable(line, tags).strip() for line in written), page=page)]
        return [Block("table", _table(tokens, n, tags), page=page)]
    return []  # a thematic break


def _table(tokens: list[Token], n: int, tags: set[str]) -> str:
    """A table written without its outer pipes as Markdown rows `| a | b |` under its header and a
    separator row."""
    rows: list[list[str]] = []
    for token in tokens[n + 1:]:
        if token.type == "table_close":
            break
        if token.type == "tr_open":
            rows.append([])
        elif token.type == "inline" and rows:
            rows[-1].append(" ".join(readable(token.content, tags).split()))
    lines = ["| " + " | ".join(row) + " |" for row in rows]
    separator = "|" + "---|" * (len(rows[0]) if rows else 1)
    return "\n".join(lines[:1] + [separator] + lines[1:])


def _unquoted(line: str, depth: int) -> str:
    for _ in range(depth):
        line = _QUOTE_MARK.sub("", line, count=1)
    return line


def _is_table(text: str) -> bool:
    return all(_TABLE_ROW.match(line) for line in text.splitlines())
