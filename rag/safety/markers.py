"""The one citation-marker form the answer model may write, and the neutralising of look-alikes.

The model cites source n as `[Sn]` (`[S1]`, `[S1][S3]`, `[S1, S2]`, `[S2-S4]`, `【S1】`…). Bracketed
numbers that are not in that form — "see Annex [3]", "【1】", "[1-2]", "note [12]" — are document text:
they are shown as `〔3〕` wherever text from a document or the model reaches a reader or the model, so
that `[n]` in a finished answer only ever means "footnote n".
"""

from __future__ import annotations

import re

from rag.safety.folding import substitute

# `[S1]`, `[S1, S2]`, `[S1-S3]`, `[S 2]`, `【S1】`, `［s1］`, `[^S1]`, `[Source 1]`, `[S1,2]`: the model's markers.
_ITEM = r"\^?\s*(?:S|Source\s*)\s*\d{1,3}"
_JOIN = r"\s*(?:[,，、;；]|[-–~～])\s*"
MODEL_MARKER = re.compile(
    rf"[\[【［]\s*({_ITEM}(?:{_JOIN}(?:{_ITEM}|\d{{1,3}}))*)\s*[\]】］]", re.IGNORECASE
)
# An opening bracket that may still turn into a model marker or a look-alike when more text streams in.
PARTIAL = re.compile(r"[\[【［][^\]】］\n]{0,24}$")
# Everything bracketed that looks like a citation: "[3]", "【1】", "[1-2]", "[^4]", "[S9]", "[Source 2]".
_LOOK_ITEM = r"\^?\s*(?:S|Source|Sources|来源|出处)?\s*[:：]?\s*\d{1,4}"
LOOK_ALIKE = re.compile(
    rf"[\[【［〔]\s*({_LOOK_ITEM}(?:{_JOIN}{_LOOK_ITEM})*)\s*[\]】］〕]", re.IGNORECASE
)
CANONICAL = re.compile(r"\[(\d+)\]")
_CANONICAL_RUN = re.compile(r"(?:\s*\[\d+\])+")
# Characters that can reorder or hide text, or end a line the model reads as a new turn; soft hyphens and
# other invisible format characters; variation selectors and Unicode tag characters, which can carry a
# whole hidden message that the reader never sees but a model may read.
_CONTROL = re.compile(
    "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u00ad\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064"
    "\u2066-\u206f\ufe00-\ufe0f\ufeff\ufff9-\ufffb\U000e0000-\U000e007f\U000e0100-\U000e01ef]"
)


def model_marker_numbers(body: str) -> list[int]:
    """Source numbers named in the inside of a model marker: `S1, S2` → [1, 2]; `S2-S4` → [2, 3, 4]."""
    numbers: list[int] = []
    for part in re.split(r"\s*[,，、;；]\s*", body.strip()):
        bounds = [int(n) for n in re.findall(r"\d+", part)]
        if len(bounds) == 2 and re.search(r"[-–~～]", part) and 0 < bounds[1] - bounds[0] < 10:
            numbers.extend(range(bounds[0], bounds[1] + 1))
        else:
            numbers.extend(bounds)
    return numbers


def neutralise(text: str) -> str:
    """Document text as readers and the model see it: bracketed-number look-alikes become `〔…〕` — also
    those spelled with look-alike letters, digits or brackets (`［Ｓ１］`, `[Ѕ1]`)."""
    def bracketed(original: str, match: re.Match[str]) -> str:
        inner = original[1:-1] if len(original) >= 2 else original
        return f"〔{inner.strip()}〕"

    return substitute(text, LOOK_ALIKE, bracketed)


def strip_canonical(text: str) -> str:
    """An earlier answer without its footnote markers (`…一百元[1]。` → `…一百元。`)."""
    return _CANONICAL_RUN.sub("", text)


def clean_control(text: str) -> str:
    """Drop invisible and control characters (keeps tabs and line breaks)."""
    return _CONTROL.sub("", text)
