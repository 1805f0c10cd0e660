"""Navigation passages: a table of contents, a sidebar, a nav bar or a list of related links — text that
points at other pages instead of saying something itself.

A passage is navigation by its structure, whatever its language: most of its lines (list items, outside code
blocks), and at least `MIN_ITEMS`, are link items — a line holding a Markdown link `[text](target)` and fewer
words around its links than in them ("* [Vacation and Sick Leave](…)", "- [3.2.1 获取 App 信息]
(#…)"). A README's introduction with a link or two in its sentences, a list of settings each with a link and
a sentence about it, or "项目地址：[lunar](…)" beside a line thanking its author, is content.

Such a passage shares the names of the pages it lists with many questions (a sidebar names every topic of
the documentation), so search ranks it high, but it answers none of them: retrieval ranks it after every
content passage (`content_first`) and the answer never quotes it (rag.judging.quotable). It stays in the index, so a
search for a page's name still finds it among the hits.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import TypeVar

from rag.words.lexical import tokenize
from rag.words.text import FENCE

# A passage of fewer link items is no list of links ("可以参考[…](…)项目中的[…](…)代码示例。")
MIN_ITEMS = 2

_IMAGE = re.compile(r"!\[[^\]\n]*\]\([^)\n]*\)")
_LINK = re.compile(r"\[([^\[\]\n]*(?:\[[^\[\]\n]*\][^\[\]\n]*)*)\]\([^)\n]*\)")


T = TypeVar("T")


@lru_cache(maxsize=65536)
def is_navigation(text: str) -> bool:
    """Whether a passage's `text` (Markdown as the chunker keeps it) is a list of links to pages."""
    lines = [_IMAGE.sub("", line) for line in _prose_lines(text)]
    lines = [line for line in lines if line.strip()]
    items = sum(map(_is_link_item, lines))
    return items >= MIN_ITEMS and 2 * items > len(lines)


def _prose_lines(text: str) -> list[str]:
    """The lines of `text` outside its fenced code blocks."""
    lines, code = [], False
    for line in text.split("\n"):
        if FENCE.match(line):
            code = not code
        elif not code:
            lines.append(line)
    return lines


def _is_link_item(line: str) -> bool:
    """A line that links and says less around its links than they say: an entry of a list of links."""
    inside = [match.group(1) for match in _LINK.finditer(line)]
    if not inside:
        return False
    return len(tokenize(_LINK.sub(" ", line))) < len(tokenize(" ".join(inside)))


def content_first(items: Sequence[T], text_of: Callable[[T], str]) -> list[T]:
    """`items` (best first) with the navigation passages after every content passage, each group in its
    own order."""
    navigation = [is_navigation(text_of(item)) for item in items]
    if not any(navigation):
        return list(items)
    return [item for item, nav in zip(items, navigation) if not nav] + [
        item for item, nav in zip(items, navigation) if nav]
