"""Workplace shorthand that people type and handbooks rarely write: abbreviations, set phrases and American
words ("How much PTO do I get?", "can I WFH on Fridays", "what's the per diem", "my vacation request") and
the plain words policies use for them ("annual leave", "work from home", "daily allowance"). Neither the
embedded model nor BM25 links the two, and the bilingual dictionary has no entry for most of them. Looked up
like any word the knowledge base never uses (rag.words.synonyms): only the plain words the knowledge base does use
count, and a knowledge base that writes the shorthand itself is searched for it as written. The embedded
model, whatever the knowledge base writes, reads a question with its shorthand spelled out beside it
(`spelled_out`).
"""

from __future__ import annotations

import re

from rag.words.languages import detect_language

# Each: the shorthand (lower case, as one word of the question) and the plain words for it, comma-separated —
# words that name it, not every word of its spelled-out form ("paid" and "time" of "paid time off" are in
# half the handbook's sentences: the home-office allowance "paid with the first salary" answered PTO too).
_PLAIN = {
    "pto": "annual leave, vacation, holidays",
    "wfh": "work from home, working from home, remote work, home office",
    "wfa": "work from anywhere, remote work",
    "ooo": "out of office, absence, away",
    "ooto": "out of the office, absence, away",
    "diem": "daily allowance, allowance per day",  # per diem
    "vacation": "annual leave, leave",  # American English; a policy written elsewhere says (annual) leave
    "vacations": "annual leave, leave",
    "payday": "salary, salary payment",
    "paycheck": "salary, pay",
    "paycheque": "salary, pay",
    "payslip": "salary statement, salary",
    "mileage": "kilometre, kilometer, distance driven",
    "loa": "leave of absence",
    "pip": "performance improvement plan",
    "okr": "objectives and key results, goals",
    "okrs": "objectives and key results, goals",
    "kpi": "key performance indicator",
    "kpis": "key performance indicators",
    "nda": "non-disclosure agreement, confidentiality agreement",
    "sso": "single sign-on",
    "2fa": "two-factor authentication, multi-factor authentication",
    "byod": "bring your own device, personal devices",
    "eod": "end of day",
    "cob": "close of business, end of the working day",
    "eow": "end of week",
    "asap": "as soon as possible, immediately",
    "eta": "estimated time of arrival",
    "ceo": "chief executive officer",
    "cfo": "chief financial officer",
    "cto": "chief technology officer",
    "coo": "chief operating officer",
    "vp": "vice president",
    "hr": "human resources, people team",
    "nyc": "new york",
    "sf": "san francisco",
    "hk": "hong kong",
    "uk": "united kingdom",
    "usa": "united states",
    "eu": "european union",
    "prc": "china",
    "t&e": "travel and expenses",
    "opex": "operating expenses",
    "capex": "capital expenditure",
}


def plain_words(word: str) -> tuple[str, ...]:
    """The plain words and phrases for a piece of workplace shorthand (`word` as the question writes it);
    none for any other word."""
    return tuple(p.strip() for p in _PLAIN.get(word.lower(), "").split(",") if p.strip())


_SHORTHAND = re.compile(r"(?<![\w&])[a-z0-9&]+(?![\w&])", re.IGNORECASE)


def spelled_out(text: str) -> str:
    """`text` with each piece of shorthand followed by its first plain words in brackets ("How much PTO
    (annual leave) do I get?"): what the embedded model reads of a question. It relates the shorthand to
    little — "what's the per diem" to the daily meal allowance at .80, spelled out at .87. A Chinese text is
    left as it is."""

    def spell(found: re.Match[str]) -> str:
        plain = plain_words(found.group(0))
        return f"{found.group(0)} ({plain[0]})" if plain else found.group(0)

    spelled = _SHORTHAND.sub(spell, text)
    return text if spelled == text or detect_language(text) == "zh" else spelled


__all__ = ["plain_words", "spelled_out"]
