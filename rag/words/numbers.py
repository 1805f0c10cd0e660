"""The numbers a text states, as values, so that "600", "六百" and "6百" compare equal across scripts.

Used by the citation check: an answer sentence stating a number no cited passage states is not supported
by them, however many of its other words they share. The sentence side is strict about what counts as a
number (a lone 一 in 一般 or 统一 is a word, not a number); the passage side is lenient (every run of
numerals counts), so that doubt falls on the side of keeping a citation.
"""

from __future__ import annotations

import re

_DIGITS = re.compile(r"\d+(?:[.,]\d+)*")
_THOUSANDS = re.compile(r"^\d{1,3}(?:,\d{3})+$")
_HAN = re.compile(r"[零〇一二三四五六七八九十百千万亿两]+")
_NUMERAL = re.compile(r"[\d.,零〇一二三四五六七八九十百千万亿两]+")
_MULTIPLIER = {"十": 10, "百": 100, "千": 1000, "万": 10_000, "亿": 100_000_000}
_HAN_DIGIT = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}
# A single numeral counts in a sentence only before a unit or measure word ("七天", "三个", "第五条").
_UNIT_AFTER = "天日年月周个元次条项件人名岁倍页章节号点%％"
_NOT_NUMBERS = {"万一", "千万", "一一", "十足", "百万分"}
_REFERENCE = re.compile(r"〔[^〔〕\n]{0,24}〕")  # a bracketed number the model wrote ("Annex [3]"), not a claim
_LIST_ITEM = re.compile(r"^\s*(?:[-*•]\s*)?(?:\d{1,2}[.)、]|[一二三四五六七八九十]{1,2}[、.])\s+|^\s*#+\s*")


def numeral(word: str) -> bool:
    """Whether `word` is only a number, in digits or Chinese numerals (十一, 600, 三百五十)."""
    return bool(_NUMERAL.fullmatch(word))


def stated_numbers(sentence: str) -> set[float]:
    """Numbers a sentence states (list numbering, references like 〔3〕 and zeros aside)."""
    text = _REFERENCE.sub(" ", _LIST_ITEM.sub("", sentence))
    values = set(_digit_values(text, lenient=False))
    for match in _HAN.finditer(text):
        run = match.group()
        before = text[match.start() - 1] if match.start() else ""
        after = text[match.end()] if match.end() < len(text) else ""
        lone = len(run) == 1 and before != "第" and not (after and after in _UNIT_AFTER)
        if run in _NOT_NUMBERS or lone or before.isdigit():  # after a digit: "3万", read with the digits
            continue
        value = han_value(run)
        if value is not None:
            values.add(value)
    return {v for v in values if v}


def passage_numbers(text: str) -> set[float]:
    """Every number a passage may be read as stating: each digit group, each numeral run, `3万` as 30000."""
    values = set(_digit_values(text, lenient=True))
    for match in _HAN.finditer(text):
        value = han_value(match.group())
        if value is not None:
            values.add(value)
        values.update(_HAN_DIGIT[c] for c in match.group() if c in _HAN_DIGIT)
    return values


def _digit_values(text: str, *, lenient: bool) -> list[float]:
    values = []
    for match in _DIGITS.finditer(text):
        raw = match.group()
        if _THOUSANDS.match(raw):
            numbers = [float(raw.replace(",", ""))]
        else:  # "1,2" is two numbers, "1.5" one; "1.2.3" (a clause) three
            parts = [p for part in raw.split(",") for p in ([part] if part.count(".") == 1 else part.split("."))]
            numbers = [float(p) for p in parts]
        if lenient:
            numbers += [float(p) for p in re.split(r"[.,]", raw)]
        unit = text[match.end()] if match.end() < len(text) else ""
        if unit in _MULTIPLIER and len(numbers) == 1:  # "3万" is thirty thousand
            numbers = [numbers[0] * _MULTIPLIER[unit]]
        elif unit in _MULTIPLIER and lenient:
            numbers.append(numbers[0] * _MULTIPLIER[unit])
        values.extend(numbers)
    return values


def han_value(run: str) -> float | None:
    """一百五十八 → 158, 六百 → 600, 十五 → 15, 三亿五千万 → 350000000, 二〇二六 → 2026; None when not a number."""
    if all(c in _HAN_DIGIT for c in run):
        return float("".join(str(_HAN_DIGIT[c]) for c in run))
    big = mid = section = 0  # the 亿 part, the 万 part, below 万
    digit = None
    for char in run:
        if char in _HAN_DIGIT:
            if digit:
                return None  # 百五 (two digits with no unit between) is not a number as written
            digit = _HAN_DIGIT[char]
        elif char == "亿":
            big = ((big + mid + section + (digit or 0)) or 1) * _MULTIPLIER[char]
            mid = section = 0
        elif char == "万":
            mid = ((mid + section + (digit or 0)) or 1) * _MULTIPLIER[char]
            section = 0
        else:
            section += (1 if digit is None else digit) * _MULTIPLIER[char]
        if char not in _HAN_DIGIT:
            digit = None
    return float(big + mid + section + (digit or 0))
