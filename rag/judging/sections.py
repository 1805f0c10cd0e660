"""A passage's own section named by a question: "What do I need to do on my first day?" names the onboarding
guide's "Your first day", whose sentences ("Arrive at 9:30 at the reception desk") do not repeat it."""

from __future__ import annotations

import re
from functools import lru_cache

from rag.words.lexical import function_word, tokenize

# A heading's number, not a word the question may share (第一天 is no 第一章)
NUMBERING = re.compile(r"^\s*(?:第[一二三四五六七八九十百千零\d]+[章节编部篇条款]|[一二三四五六七八九十]+[、.．]|"
                       r"[（(][一二三四五六七八九十\d]+[)）]|\d+(?:\.\d+)*\.?)\s*")


@lru_cache(maxsize=8192)
def heading_words(heading: str) -> frozenset[str]:
    """The words of a heading as `tokenize` makes them, without its number and function words."""
    words = tokenize(NUMBERING.sub("", heading))
    return frozenset(t for t in words if not function_word(t) and not t.isdigit())


def named_section(asked: set[str], heading_path: tuple[str, ...]) -> frozenset[str]:
    """The words of a passage's own (deepest) heading when the question's words (`asked`, tokenized) hold
    them all, else none. Only the deepest: a document's chapters and title head every passage under them."""
    words = heading_words(heading_path[-1]) if heading_path else frozenset()
    return words if words and words <= asked else frozenset()
