"""What a reader sees of the markup inside a Markdown document: the text of an HTML block (without its style
sheets, scripts, frames and attributes), prose without inline tags, template directives (Liquid or Jinja's
`{% … %}` and `{{ … }}`, as static-site generators write them) or character entities (`&nbsp;`, `&amp;`).
Code spans keep what they hold, as written.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable

import lxml.html
from lxml import etree

from rag.parsing.mineru_blocks import html_table_to_markdown
from rag.types import Block

# A code span: what it holds is shown as written (an entity or a template in it is the thing explained)
_CODE_SPAN = re.compile(r"(`+)(?!`).*?(?<!`)\1(?!`)", re.DOTALL)
# Template directives: a comment with what it comments out, then any tag or output statement
_TEMPLATE = re.compile(r"\{%-?\s*comment\s*-?%\}.*?\{%-?\s*endcomment\s*-?%\}|\{%.*?%\}|\{\{.*?\}\}", re.DOTALL)
# Liquid's highlighted code, written as a fenced block
_HIGHLIGHT = re.compile(r"^([ \t]*)\{%-?\s*highlight\s+([\w+#.-]+)[^%]*%\}[ \t]*$", re.MULTILINE)
_END_HIGHLIGHT = re.compile(r"^([ \t]*)\{%-?\s*endhighlight\s*-?%\}[ \t]*$", re.MULTILINE)
# A link whose target was a template directive (`[the travel page]({% link travel.md %})`): its text
_EMPTY_LINK = re.compile(r"(?<!!)\[([^\]]*)\]\(\s*\)")
_LINE_BREAK = re.compile(r"<br\s*/?>", re.IGNORECASE)
# Elements nobody reads as text: what they hold is dropped with them
_UNREAD = {"style", "script", "iframe", "noscript", "template", "svg", "head", "title", "object", "embed", "video",
           "audio", "canvas", "select", "button", "map", "math"}
# Elements that end a line of text where they open and close
_BLOCK_ELEMENTS = {"p", "div", "br", "li", "ul", "ol", "dl", "dt", "dd", "tr", "blockquote", "section", "article",
                   "header", "footer", "nav", "aside", "main", "figure", "figcaption", "details", "summary",
                   "center", "pre", "hr", "form", "fieldset", "address", "caption"}
_HEADINGS = {f"h{n}": n for n in range(1, 7)}


def highlights_fenced(source: str) -> str:
    """`source` with Liquid's `{% highlight lang %}` … `{% endhighlight %}` written as a fenced code block."""
    return _END_HIGHLIGHT.sub(r"\1```", _HIGHLIGHT.sub(r"\1```\2", source))


def readable(text: str, tags: Iterable[str] = ()) -> str:
    """Markdown prose as it reads: without template directives, without the inline HTML `tags` (exactly as the
    Markdown parser found them; a line break becomes a space), entities decoded. Code spans are left as
    written."""
    tags = sorted(set(tags), key=len, reverse=True)
    parts: list[str] = []
    pos = 0
    for span in _CODE_SPAN.finditer(text):
        parts.append(_prose(text[pos:span.start()], tags))
        parts.append(span.group())
        pos = span.end()
    parts.append(_prose(text[pos:], tags))
    return "".join(parts)


def _prose(text: str, tags: list[str]) -> str:
    text = _EMPTY_LINK.sub(r"\1", _TEMPLATE.sub("", text))
    for tag in tags:
        text = text.replace(tag, " " if _LINE_BREAK.fullmatch(tag) else "")
    return html.unescape(text).replace("\xa0", " ")


def html_blocks(markup: str, page: int | None = None) -> list[Block]:
    """The blocks an HTML block of a Markdown document reads as: its headings, its tables (as Markdown
    tables) and its text, a block per paragraph; style sheets, scripts, frames, images and attributes
    dropped."""
    try:
        root = lxml.html.fragment_fromstring(_TEMPLATE.sub("", markup), create_parent="div")
    except (etree.ParserError, ValueError):
        return []
    reader = _HtmlReader(page)
    reader.read(root)
    return reader.done()


class _HtmlReader:
    def __init__(self, page: int | None) -> None:
        self.page = page
        self.blocks: list[Block] = []
        self.line: list[str] = []

    def read(self, element) -> None:
        self._text(element.text)
        for child in element:
            tag = child.tag.lower() if isinstance(child.tag, str) else ""
            if tag in _HEADINGS:
                self._flush()
                title = _squeezed(child.text_content())
                if title:
                    self.blocks.append(Block("heading", title, level=_HEADINGS[tag], page=self.page))
            elif tag == "table":
                self._flush()
                table = html_table_to_markdown(etree.tostring(child, encoding="unicode"))
                if table:
                    self.blocks.append(Block("table", table, page=self.page))
            elif tag and tag not in _UNREAD:  # a comment or an unread element: only its tail is text
                if tag in _BLOCK_ELEMENTS:
                    self._flush()
                self.read(child)
                if tag in _BLOCK_ELEMENTS:
                    self._flush()
            self._text(child.tail)

    def _text(self, text: str | None) -> None:
        if text:
            self.line.append(text)

    def _flush(self) -> None:
        text = _squeezed("".join(self.line))
        self.line.clear()
        if text:
            self.blocks.append(Block("text", text, page=self.page))

    def done(self) -> list[Block]:
        self._flush()
        return self.blocks


def _squeezed(text: str) -> str:
    return " ".join(text.replace("\xa0", " ").split())
