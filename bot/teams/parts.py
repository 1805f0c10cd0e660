"""A long answer as several Teams messages. Teams refuses a bot message over 40 KB (UTF-16, citations
included; newer documentation says 100 KB, the stricter figure is kept): the answer is cut between
paragraphs, else sentences, into messages that fit, each carrying the citations of the markers in it —
renumbered 1, 2, … within it, since Teams opens a message's `[n]` from that message's own citations."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from microsoft_agents.activity import ClientCitation

from bot.core.text import split_text
from bot.teams.citations import teams_citation
from rag.types import Citation

PART_BYTES = 32 * 1024  # of the 40 KB: the rest is the activity's own fields (ids, entities, channel data)
PIECE_CHARS = 2000  # parts are packed from pieces of at most this much text
_MARKER = re.compile(r"\[(\d+)\]")


@dataclass(frozen=True)
class Part:
    text: str
    citations: list[ClientCitation]


def _size(text: str, citations: list[ClientCitation]) -> int:
    cards = [c.model_dump(mode="json", by_alias=True, exclude_none=True) for c in citations]
    return len(json.dumps({"text": text, "citation": cards}, ensure_ascii=False).encode("utf-16-le"))


def _part(text: str, by_marker: dict[int, Citation]) -> Part:
    """`text` with its markers renumbered 1…n in order of appearance, and their citations."""
    order: list[int] = []
    for found in _MARKER.finditer(text):
        marker = int(found.group(1))
        if marker in by_marker and marker not in order:
            order.append(marker)
    new = {old: n for n, old in enumerate(order, 1)}

    def renumber(found: re.Match) -> str:
        marker = int(found.group(1))
        return f"[{new[marker]}]" if marker in new else found.group()

    citations = [teams_citation(Citation(new[old], by_marker[old].chunk)) for old in order]
    return Part(_MARKER.sub(renumber, text), citations)


def answer_parts(text: str, citations: list[Citation], max_bytes: int = PART_BYTES) -> list[Part]:
    """The messages for an answer's `text` (its markers citing `citations`); one when it fits."""
    by_marker = {c.marker: c for c in citations}
    whole = _part(text, by_marker)
    if _size(whole.text, whole.citations) <= max_bytes:
        return [whole]
    parts: list[Part] = []
    current = ""
    for piece in split_text(text, PIECE_CHARS):
        candidate = f"{current}\n\n{piece}" if current else piece
        trial = _part(candidate, by_marker)
        if current and _size(trial.text, trial.citations) > max_bytes:
            parts.append(_part(current, by_marker))
            candidate = piece
        current = candidate
    if current:
        parts.append(_part(current, by_marker))
    return parts
