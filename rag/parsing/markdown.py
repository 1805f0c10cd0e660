"""Markdown and plain text: `#` headings are the structure, blank lines separate paragraphs."""

from __future__ import annotations

import re

from rag.types import Block

_FRONT_MATTER = re.compile(r"\A(?:[ \t]*\n)*---[ \t]*\n(.*?)\n---[ \t]*(?:\n|\Z)", re.DOTALL)
# An opening `---` with an `access:` key below it in the same paragraph, never closed
_UNCLOSED_ACCESS = re.compile(r"\A(?:[ \t]*\n)*---[ \t]*\n(?:[^\n]*\S[^\n]*\n)*?[ \t]*access[ \t]*:",
                              re.IGNORECASE)
_FRONT_MATTER_LINE = re.compile(r"^([A-Za-z_][\w-]*)\s*:\s*(.*?)\s*$")
_FRONT_MATTER_ITEM = re.compile(r"^\s*-\s+(.*?)\s*$")
_ATX_HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*?)[ \t#]*$")
_SETEXT_UNDERLINE = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
HTML_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
_TABLE_ROW = re.compile(r"^\s*\|.*\|\s*$")


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
    """Blocks of a Markdown (or plain text) body, in order."""
    source = HTML_COMMENT.sub("", source.replace("\r\n", "\n").replace("\r", "\n"))
    blocks: list[Block] = []
    paragraph: list[str] = []
    fence: str | None = None

    def flush() -> None:
        text = "\n".join(paragraph).strip()
        paragraph.clear()
        if text:
            is_table = all(_TABLE_ROW.match(line) for line in text.splitlines())
            blocks.append(Block("table" if is_table else "text", text, page=page))

    for line in source.split("\n"):
        if fence is not None:
            paragraph.append(line)
            if line.strip().startswith(fence):
                fence = None
            continue
        fence_match = _FENCE.match(line)
        if fence_match:
            flush()
            fence = fence_match.group(1)[:3]
            paragraph.append(line)
            continue
        heading = _ATX_HEADING.match(line)
        if heading:
            flush()
            title = heading.group(2).strip()
            if title:
                blocks.append(Block("heading", title, level=len(heading.group(1)), page=page))
            continue
        underline = _SETEXT_UNDERLINE.match(line)
        if underline and len(paragraph) == 1 and paragraph[0].strip() and not _TABLE_ROW.match(paragraph[0]):
            title = paragraph.pop().strip()
            blocks.append(Block("heading", title, level=1 if underline.group(1)[0] == "=" else 2, page=page))
            continue
        if not line.strip():
            flush()
            continue
        if paragraph and bool(_TABLE_ROW.match(line)) != bool(_TABLE_ROW.match(paragraph[-1])):
            flush()  # a table directly after prose (or vice versa) is its own block
        paragraph.append(line.rstrip())
    flush()
    return blocks
