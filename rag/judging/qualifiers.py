"""The question's specific qualifiers — a year, a version, a name (a state, a city, a tool, a holiday) — that
the knowledge base never writes. Asked for another year's dates, another state's leave or a tool it does not
work with, the passages match the question's topic well and the answer would be the neighbouring fact (2024's
salary cap for 2025, California's leave for New York): the qualifier is what the question is about, and an
absent one is a near miss whatever the rest matches (rag.judging.near_miss).

A name is a run of capitalised words inside an English sentence (not the one opening it), a word jieba tags
as a person, place, organisation or other proper noun in a Chinese one, or a Latin-script word written
with a capital inside a Chinese question ("Slack", "Portal"); a year is 1900–2099, a version a number with a
dot or a "v" ("4.0", "v4"). It is absent when the knowledge base never uses one of its words (its IDF is an
unseen word's), nor — asked across languages — any of the dictionary's translations of it; a version or year
when no candidate passage writes it."""

from __future__ import annotations

import difflib
import re
import unicodedata

from rag.words.bilingual import translations
from rag.words.jargon import plain_words
from rag.judging import calibration
from rag.words.lexical import UNSEEN, Idf, function_word, tokenize, without_cjk
from rag.words.synonyms import asks
from rag.types import Chunk

# A run of capitalised words (a name of two words is one qualifier: "New York", "San Francisco"), not opening
# a sentence; "I" and its contractions are no name.
_NAME_RUN = re.compile(r"(?<![.?!:;]\s)(?<!^)\b((?:[A-Z][\w'’&.-]*)(?:\s+[A-Z][\w'’&.-]*)*)")
_POSSESSIVE = re.compile(r"['’]s$")
_YEAR = re.compile(r"(?<![\d.])(?:19|20)\d\d(?![\d.])")
_VERSION = re.compile(r"(?<![\w.])v?\d+(?:\.\d+)+(?![\w.])|(?<![\w.])v\d+(?![\w.])", re.IGNORECASE)
_LATIN_NAME = re.compile(r"\b[A-Z][A-Za-z]+\b")
# Two spellings this alike (difflib's ratio) are one name misspelt: hartmanis/hatmanis .94, arpanet/arpnet .92
# (slack/stack .80 are two)
SPELLED_ALIKE = calibration.default().near_miss.spelled_alike  # (rag/judging/calibration.json)
# jieba's part-of-speech tags of names: person, place, organisation (not its "other proper noun", nz, which it
# gives common nouns too: 黑客, "hacker")
PROPER = ("nr", "ns", "nt")


def qualifiers(question: str, language: str) -> list[str]:
    """The question's names, years and versions, as it writes them."""
    found = [m.group(0) for m in _VERSION.finditer(question)]
    found += [m.group(0) for m in _YEAR.finditer(question) if not any(m.group(0) in v for v in found)]
    if language == "zh":
        found += _chinese_names(question)
    else:
        found += [_trimmed(m.group(1)) for m in _NAME_RUN.finditer(question.strip())]
    return [q for q in dict.fromkeys(found) if _named(q)]


def _trimmed(run: str) -> str:
    """A run of capitalised words without a possessive and without the function words at its ends ("I WFH":
    "WFH")."""
    parts = _POSSESSIVE.sub("", run).rstrip(".").split()
    while parts and all(function_word(t) for t in tokenize(parts[0])):
        parts.pop(0)
    while parts and all(function_word(t) for t in tokenize(parts[-1])):
        parts.pop()
    return " ".join(parts)


def _named(qualifier: str) -> bool:
    """Whether a qualifier says something: not "I", "I'm", nor a function word alone."""
    tokens = tokenize(qualifier)
    return bool(tokens) and not all(function_word(t) or asks(t) for t in tokens)


def _chinese_names(question: str) -> list[str]:
    """The proper nouns jieba tags in a Chinese question, and the capitalised Latin-script words it writes."""
    from jieba import posseg  # (loaded with jieba's dictionary by rag.words.lexical)

    found = [pair.word for pair in posseg.lcut(question)
             if pair.flag.startswith(PROPER) and len(pair.word) > 1 and not without_cjk(pair.word).strip()]
    return found + _LATIN_NAME.findall(without_cjk(question))


def absent_qualifiers(question: str, language: str, sources: list[Chunk], languages: list[str],
                      idf: Idf) -> tuple[str, ...]:
    """The question's qualifiers the knowledge base never writes (a year or version no candidate passage
    writes); across languages a name only where none of its translations is used either, and a Latin-script
    name without one only where the candidates write names in Latin script themselves."""
    if not sources:
        return ()
    rare = idf([UNSEEN])[UNSEEN] - 1e-9
    texts = [c.text for c in sources]
    across = all(p != language for p in languages[: len(sources)])
    latin_names = any(_LATIN_NAME.search(without_cjk(t)) for t in texts)
    out = []
    for qualifier in qualifiers(question, language):
        if _VERSION.fullmatch(qualifier) or _YEAR.fullmatch(qualifier):
            number = re.compile(rf"(?<![\d.]){re.escape(qualifier.lstrip('vV'))}(?![\d])")
            if not any(number.search(t) for t in texts):
                out.append(qualifier)
            continue
        if _written(qualifier, idf, rare) or any(_written(p, idf, rare) for p in plain_words(qualifier)):
            continue  # the knowledge base writes each of its words (or of its plain words: "WFH")
        if _abbreviated(qualifier) or _spelled_otherwise(qualifier, texts):
            continue
        if across and not _untranslated(question, language, qualifier, idf, rare, latin_names):
            continue
        out.append(qualifier)
    return tuple(out)


def _abbreviated(name: str) -> bool:
    """Whether a name is an abbreviation of three letters or fewer ("UN", "NY", "Sr"): the knowledge base
    may write it out in full."""
    return len(name.replace(".", "")) <= 3 and name.isascii()


def _spelled_otherwise(name: str, texts: list[str]) -> bool:
    """Whether each word of `name` the candidates do not write as it stands they write with accents or one
    or two letters apart (`SPELLED_ALIKE`): "Herve" for "Hervé", "Hatmanis" for "Hartmanis" — the asker's
    spelling, not another name."""
    written = {w for t in texts for w in _folded(t).split()}
    return all(w in written or (len(w) >= 5 and difflib.get_close_matches(w, written, 1, SPELLED_ALIKE))
               for w in _folded(name).split())


def _folded(text: str) -> str:
    """`text` lower-cased, without accents, its words apart."""
    decomposed = unicodedata.normalize("NFKD", text.lower())
    return re.sub(r"[^\w]+", " ", "".join(c for c in decomposed if not unicodedata.combining(c)))


def _written(name: str, idf: Idf, rare: float) -> bool:
    """Whether the knowledge base uses each word of `name` (that is no function word)."""
    tokens = [t for t in tokenize(name) if not function_word(t) and not asks(t)]
    weights = idf(tokens) if tokens else {}
    return not tokens or all(weights.get(t, 0.0) < rare for t in tokens)


def _untranslated(question: str, language: str, qualifier: str, idf: Idf, rare: float,
                  latin_names: bool) -> bool:
    """Whether the knowledge base uses none of the dictionary's translations of `qualifier` — and, where the
    dictionary has none, whether the name is Latin-script and the candidates write such names (a knowledge
    base of Chinese statutes writes "Beijing" as 北京, a product's Chinese guide writes "Slack" as it is)."""
    named = set(tokenize(qualifier))
    found = [f for phrase, said in translations(question, language)
             if set(tokenize(phrase)) & named for f in said]
    if not found:
        return latin_names and bool(_LATIN_NAME.search(qualifier))
    tokens = sorted({t for f in found for t in tokenize(f)})
    tokens += sorted({doer_of(t) for t in tokens} - {""})
    weights = idf(tokens) if tokens else {}
    return not any(w < rare for w in weights.values())


def doer_of(token: str) -> str:
    """The word an English agent noun is made from, as the stemmer keeps it ("hacker": "hack", where the
    handbook's "Hack Week" is the dictionary's 黑客周), else ""; at least four letters ("user" is no "us")."""
    return token[:-2] if token.endswith("er") and len(token) >= 6 and token.isascii() else ""
