"""A copy of text folded for detection: look-alikes of the characters that spell our tags, markers and
chat-template tokens become those characters, so one pattern catches `</source>`, `＜/ѕоurce＞` and
`<ｓｏｕｒｃｅ>` alike. Matches found in the folded copy are mapped back to spans of the original, which is
changed only inside those spans: everything else the reader or the model sees stays as it was.

Folding is NFKD (fullwidth, small and mathematical forms, ligatures, accents split off), then dropping
combining marks, then a small map of Cyrillic, Greek, Armenian and small-capital letters and punctuation that
look like Latin letters, `<`, `>`, `/`, `|`, `=`, `"`, `[` and `]`. The map is our own and deliberately
small: the full Unicode confusables table also folds `‹`, `›` and `〔`, `〕` — the characters defanged text
is written with — back into `<`, `>`, `[`, `]`.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

_LOOKS_LIKE = {
    "a": "аɑαա", "b": "Ьʙ", "c": "сϲᴄ", "d": "ԁᴅ", "e": "еєεᴇ", "g": "ɡɢ", "h": "һհʜ", "i": "іιıɪ", "j": "јȷᴊ",
    "k": "κᴋ", "l": "ӏʟ", "m": "ᴍ", "n": "ոɴ", "o": "оοօᴏ", "p": "рρᴘ", "q": "ԛ", "r": "ʀ", "s": "ѕꜱ",
    "t": "τᴛ", "u": "υսᴜ", "v": "νᴠ", "w": "ԝᴡ", "x": "хχ", "y": "уγʏ", "z": "ᴢ",
    "A": "АΑ", "B": "ВΒ", "C": "СϹ", "E": "ЕΕ", "H": "НΗ", "I": "ІΙӀ", "J": "Ј", "K": "КΚ", "M": "МΜ",
    "N": "Ν", "O": "ОΟՕ", "P": "РΡ", "Q": "Ԛ", "S": "ЅՏ", "T": "ТΤ", "U": "Ս", "W": "Ԝ", "X": "ХΧ",
    "Y": "УΥ", "Z": "Ζ",
    "<": "〈⟨˂ᐸ❮", ">": "〉⟩˃ᐳ❯", "/": "∕⁄⧸╱⟋", "|": "ǀ∣│┃❘", "=": "꞊᐀⹀゠", '"': "ʺ˝״",
    "[": "⁅⟦", "]": "⁆⟧",
}
_MAP = str.maketrans({look: plain for plain, looks in _LOOKS_LIKE.items() for look in looks})


@lru_cache(maxsize=4096)
def fold_char(char: str) -> str:
    """What one character reads as for detection: "" for a combining mark, else one or more characters."""
    decomposed = unicodedata.normalize("NFKD", char)
    return "".join(c for c in decomposed if unicodedata.category(c) not in ("Mn", "Me")).translate(_MAP)


@dataclass(frozen=True)
class Folded:
    text: str
    origin: tuple[int, ...]  # for every character of `text`, the index of the original character it came from

    def span(self, start: int, end: int) -> tuple[int, int]:
        """The original span that folded text[start:end] (non-empty) came from."""
        return self.origin[start], self.origin[end - 1] + 1


def fold(text: str) -> Folded:
    chars: list[str] = []
    origin: list[int] = []
    for index, char in enumerate(text):
        folded = char if char.isascii() else fold_char(char)
        chars.append(folded)
        origin.extend([index] * len(folded))
    return Folded("".join(chars), tuple(origin))


def substitute(text: str, pattern: re.Pattern[str], replace: Callable[[str, re.Match[str]], str]) -> str:
    """`text` with every match of `pattern` in its folded copy replaced by `replace(original span, match)`."""
    folded = fold(text)
    pieces: list[str] = []
    cursor = 0
    for match in pattern.finditer(folded.text):
        if match.end() == match.start():
            continue
        start, end = folded.span(match.start(), match.end())
        if start < cursor:  # two matches inside one original character: the first one changed it
            continue
        pieces.append(text[cursor:start])
        pieces.append(replace(text[start:end], match))
        cursor = end
    pieces.append(text[cursor:])
    return "".join(pieces)


def swap(original: str, replacements: dict[str, str]) -> str:
    """`original` with every character that folds to a key of `replacements` written as its value."""
    out = []
    for char in original:
        folded = char if char.isascii() else fold_char(char)
        out.append(next((new for old, new in replacements.items() if old in folded), char))
    return "".join(out)
