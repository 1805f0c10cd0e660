"""Sentence boundaries for Chinese, Latin-script and mixed text, and where a Markdown text's code blocks are."""

from __future__ import annotations

import re

_CLOSERS = re.escape("\"'”’」』》）)】]")
# A sentence ends after CJK/Latin terminal punctuation (plus closing quotes/brackets), after a
# Latin full stop followed by whitespace, or at a line break.
_SENTENCE_END = re.compile(
    rf"[。！？；!?;…]+[{_CLOSERS}]*\s*"
    rf"|(?<!\b[A-Za-z])(?<!\bMr)(?<!\bDr)(?<!\bMs)(?<!\bvs)\.[{_CLOSERS}]*(?:\s+|$)"
    r"|\n+"
)
# Full sentences only: a semicolon or an ellipsis does not end one (quotes keep "…一百元；出发和返回当天…" whole).
_FULL_STOP = re.compile(
    rf"[。！？!?]+[{_CLOSERS}]*\s*"
    rf"|(?<!\b[A-Za-z])(?<!\bMr)(?<!\bDr)(?<!\bMs)(?<!\bvs)(?<!\bSt)(?<!\bNo)\.[{_CLOSERS}]*(?:\s+|$)"
    r"|\n+"
)
_SOFT_BREAK = re.compile(r"[，、,:：]\s*|\s+")
# A Markdown code fence: three or more backticks or tildes, indented by at most three spaces
FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")


def sentence_spans(text: str, start: int = 0, end: int | None = None, *, clauses: bool = True) -> list[tuple[int, int]]:
    """Split text[start:end] into contiguous sentence spans that cover it completely.

    With `clauses` (the default, for chunking) a semicolon or ellipsis also ends a span; without, only a
    full stop does. Trailing whitespace stays with the sentence before it, so spans tile the range exactly.
    """
    end = len(text) if end is None else end
    spans: list[tuple[int, int]] = []
    pos = start
    for match in (_SENTENCE_END if clauses else _FULL_STOP).finditer(text, start, end):
        if match.end() > pos:
            spans.append((pos, match.end()))
            pos = match.end()
    if pos < end:
        spans.append((pos, end))
    return spans


def hard_split(text: str, start: int, end: int, limit: int) -> list[tuple[int, int]]:
    """Cut one over-long sentence into pieces of at most `limit` chars, preferring clause breaks."""
    pieces: list[tuple[int, int]] = []
    pos = start
    while end - pos > limit:
        window_end = pos + limit
        cut = window_end
        for match in _SOFT_BREAK.finditer(text, pos + limit // 2, window_end):
            cut = match.end()
        pieces.append((pos, cut))
        pos = cut
    pieces.append((pos, end))
    return pieces


def _opening_fence(lead: str) -> str | None:
    """The fence a passage's lead opens (the passage starts inside that code block), else None."""
    line = lead.split("\n", 1)[0]
    return line.strip() if FENCE.match(line) else None


def code_and_prose(text: str, lead: str = "") -> list[tuple[int, int, str | None]]:
    """The spans of a passage's `text` in order, each with the opening fence of the code block it is (None:
    prose); `lead`: the passage's, whose fence opens the block its text starts inside of."""
    fence = _opening_fence(lead)
    spans: list[tuple[int, int, str | None]] = []
    start, pos = 0, 0
    for line in text.split("\n"):
        marks = FENCE.match(line)
        if fence is None and marks:
            if pos > start:
                spans.append((start, pos, None))
            start, fence = pos, line.strip()
        elif fence is not None and marks and marks.group(1)[0] == fence[0] and not line.strip(fence[0] + " \t"):
            spans.append((start, pos + len(line), fence))
            start, fence = pos + len(line) + 1, None
        pos += len(line) + 1
    if len(text) > start:
        spans.append((start, len(text), fence))
    return spans
