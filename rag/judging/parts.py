"""The parts of a question that asks more than one thing, read from its syntax.

"How many vacation days do I get, and what happens when a holiday falls on a Sunday?" asks two things that
two documents answer. Scored as one question, every sentence is measured against both asks at once, and the
answer quotes the side the model finds closer. Split into its asks, each part is scored by its own relevance
(rag.answering.evidence) and quoted from its own best source (`quotes_by_part`); a part no passage answers
is named as such, under the quotes of the parts that are answered.

A question has parts when it holds more than one ask, by its grammar alone:

* two question sentences ("…走哪个端口？登录 Portal 的默认账号密码又是什么？");
* coordinated question clauses: a clause opened by a question word after "and", "but", "also" or a semicolon
  ("…, and how often do I meet them?"; which, who, whom and whose, which also open relative clauses, only
  with an auxiliary close after them: "and which hours must I …"), or a yes-or-no clause, an auxiliary and
  its subject ("…, and do I need a receipt?"); in Chinese, clauses between commas that each hold a question
  word (…有多长，还有食堂几点开饭？);
* a comparison: "difference between A and B", "compare A with B", "A vs B", "A和B有什么区别".

What is said around the asks without asking (a sentence that sets the scene, "I'm pregnant and work in
California:") is context, searched with every part. A would-be part that names nothing of its own (no key
word, rag.words.synonyms.is_key), or an English one of fewer than three words ("… and how early"), belongs to the
ask before it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from rag.words.languages import ByLanguage
from rag.words.lexical import tokenize
from rag.judging.negation import QUESTION_WORDS, QUESTION_WORDS_ZH
from rag.words.synonyms import is_key

if TYPE_CHECKING:
    from rag.judging.analysis import QuestionAnalysis
    from rag.judging.evidence import Evidence
    from rag.judging.gate import GateDecision
    from rag.judging.quotable import Unit
    from rag.types import Hit

MAX_PARTS = 3  # a longer list of asks is read as three: the last one holds the rest
MIN_WORDS = 3  # words an English clause needs to be an ask of its own ("and how early" is not)
MIN_HAN = 4  # ... and Chinese characters a Chinese one needs besides its question words ("有什么办法" is not)

# English auxiliaries that open a yes-or-no question ("…, and do I need a receipt?")
_AUXILIARIES = ("is are was were do does did can could may might must should will would shall have has am "
                "isn't aren't don't doesn't can't won't shouldn't")
_EN_WH = "|".join(sorted(QUESTION_WORDS["en"], key=len, reverse=True))
_EN_AUX = "|".join(_AUXILIARIES.split())
_EN_COORDINATION = r"(?:and|but|also|plus)(?:\s+also)?"
# Who an auxiliary that opens a question asks of ("…, and do I need …", not "…, and don't require …")
_EN_SUBJECTS = "i|you|we|they|he|she|it|there|the|a|an|my|our|your|their|his|her|this|that|these|those"
# Question words that also open relative clauses ("…, but which in practice take too long"): a second ask
# only with an auxiliary within their next three words ("and which hours must I …", "and who is …")
_EN_RELATIVE = "which|who|whom|whose"
_EN_OPENING = "|".join(w for w in QUESTION_WORDS["en"] if w not in _EN_RELATIVE.split("|"))
# Where a new English ask begins: after a conjunction (with or without a comma) or a semicolon, a question
# word, or an auxiliary and its subject.
_EN_ASK_AHEAD = (rf"(?=(?:{_EN_OPENING})\b|(?:{_EN_RELATIVE})(?:\s+[\w'-]+){{0,2}}\s+(?:{_EN_AUX})\b"
                 rf"|(?:{_EN_AUX})\s+(?:{_EN_SUBJECTS})\b)")
_EN_SPLIT = re.compile(
    rf"\s*,?\s+{_EN_COORDINATION}\s+{_EN_ASK_AHEAD}|\s*;\s*(?:{_EN_COORDINATION}\s+)?{_EN_ASK_AHEAD}",
    re.IGNORECASE)
_EN_ASKS = re.compile(rf"\b(?:{_EN_WH})\b|^\s*(?:(?:{_EN_COORDINATION})\s+)?(?:{_EN_AUX})\b|\?\s*$",
                      re.IGNORECASE)
# ... and a sentence that does: opened by a question word or an auxiliary, or put with a question mark
_EN_QUESTION = re.compile(rf"^(?:(?:{_EN_COORDINATION})\s+)?(?:{_EN_WH}|{_EN_AUX})\b|\?$", re.IGNORECASE)
# A clause that sets the scene of the ask after it ("If I cannot log in, whom do I call?", "When I travel,
# what can I claim?"): opened by a subordinating word that no auxiliary follows ("When is …" asks)
_EN_SCENE = re.compile(rf"^\s*(?:if|when|whenever|unless|because|since|while|although|though|once|as soon as"
                       rf"|in case|after|before)\b(?!\s+(?:{_EN_AUX})\b)", re.IGNORECASE)
# Chinese: what joins a second ask to the first (…，还有…；…，另外…)
_ZH_JOINED = re.compile(r"^(?:还有|另外|以及|并且|而且|同时|此外|那么|那|又|再)")
# A Chinese question word, a "how long / how far …" (多久, 多长), a question particle, an "A-not-A" (能不能)
_ZH_ASKING = re.compile(QUESTION_WORDS_ZH.pattern + r"|多[久长大远高快重深宽]|吗|呢|是否|能否|可否"
                        r"|([\u4e00-\u9fff])不\1")
_ZH_ASKS = re.compile(_ZH_ASKING.pattern + r"|[?？]\s*$")  # ... or a question mark
# Where a sentence ends: after a question mark or a semicolon, a colon that introduces what follows (not the
# one of a clock time, "10:30"), a full stop after a lower-case word and before a capital (not "Mr. Costa")
_HAN = re.compile(r"[\u4e00-\u9fff]")
_SENTENCE_END = re.compile(r"(?<=[?？!！。;；：])|(?<=[:;])(?=\s)|(?<=[a-z]{2}\.)(?=\s+[A-Z])")
_COMPARISONS = (
    re.compile(r"\bdiff\w*\s+between\s+(?P<a>.+?)\s+and\s+(?P<b>.+?)\s*[?.!]*$", re.IGNORECASE),
    re.compile(r"\b(?:compare|comparing|comparison\s+of)\s+(?P<a>.+?)\s+(?:with|to|and|against)\s+(?P<b>.+?)"
               r"\s*[?.!]*$", re.IGNORECASE),
    re.compile(r"^(?:.*?\b(?:is|are)\s+)?(?P<a>[^,;?]+?)\s+(?:vs\.?|versus)\s+(?P<b>[^,;?]+?)\s*[?.!]*$",
               re.IGNORECASE),
    re.compile(r"(?P<a>[^，,；;？?]+?)(?:和|与|跟|同)(?P<b>[^，,；;？?]+?)(?:之间)?(?:的|有)?(?:什么|何|哪些)?"
               r"(?:区别|不同|差别|差异)(?:是什么|在哪里?|有哪些)?\s*[?？]?$"),
    re.compile(r"(?:比较|对比)(?:一下)?(?P<a>[^，,；;？?]+?)(?:和|与|跟)(?P<b>[^，,；;？?]+?)(?:的|[?？。]|$)"),
)


@dataclass(frozen=True)
class Part:
    """One ask of a question: `text` as asked (what the answer names when nothing answers it), `query` what
    is searched (the ask with the question's context)."""

    text: str
    query: str


@dataclass
class AnsweredPart:
    """One part on its way to the answer: its evidence, the answer's passages scored against it (for the
    gate's passage signals) and the gate's decision on it."""

    part: Part
    evidence: Evidence
    passages: list[Hit] = field(default_factory=list)
    decision: GateDecision | None = None
    analysis: QuestionAnalysis | None = None  # its query as rag.judging.analysis read it

    @property
    def supported(self) -> bool:
        return self.decision is not None and self.decision.answer


def question_parts(question: str, language: str) -> list[Part]:
    """The asks of `question` (in `language`: English and Chinese are read), in the order asked; empty when
    it asks one thing."""
    if language not in ("en", "zh"):
        return []
    compared = _compared(question)
    if compared:
        return compared
    asks = _asks(language)
    context: list[str] = []
    clauses: list[str] = []
    for sentence in _SENTENCE_END.split(question):
        if not sentence.strip():
            continue
        if not asks(sentence):  # it sets the scene ("I'm pregnant and work in California:")
            context.append(sentence.strip())
            continue
        asked = _clauses(sentence, language)
        while len(asked) > 1 and not _asks_alone(asked[0], language):  # the scene of the asks after it
            context.append(asked.pop(0))
        clauses.extend(asked)
    parts = _with_own_words(clauses, language)
    if len(parts) < 2:
        return []
    if len(parts) > MAX_PARTS:
        parts = parts[: MAX_PARTS - 1] + [_joined(parts[MAX_PARTS - 1:], language)]
    scene = _joined(context, language)
    return [Part(p, _joined([scene, p], language) if scene else p) for p in parts]


def _asks(language: str) -> Callable[[str], bool]:
    if language == "zh":
        return lambda text: bool(_ZH_ASKS.search(text))
    return lambda text: bool(_EN_QUESTION.search(text.strip()))


def _asks_alone(clause: str, language: str) -> bool:
    """Whether the first clause of a question sentence asks something itself, not only sets the scene."""
    return language == "zh" or (bool(_EN_ASKS.search(clause)) and not _EN_SCENE.match(clause))


def _clauses(sentence: str, language: str) -> list[str]:
    """The asks of one question sentence (with its final punctuation on the last)."""
    if language == "en":
        return [c.strip() for c in _EN_SPLIT.split(sentence) if c.strip()]
    pieces = [p.strip() for p in re.split(r"[，,、]", sentence) if p.strip()]
    clauses: list[str] = []
    for piece in pieces:
        # A new ask starts at a clause with a question word of its own, after one that holds a question word
        # (the sentence's question mark is all of its clauses')
        if clauses and _ZH_ASKING.search(piece) and _ZH_ASKING.search(clauses[-1]):
            clauses.append(_ZH_JOINED.sub("", piece) or piece)
        elif clauses:
            clauses[-1] += "，" + piece
        else:
            clauses.append(piece)
    return clauses


def _own_words(text: str) -> int:
    return sum(1 for t in tokenize(text) if is_key(t))


def _names_something(text: str) -> bool:
    """Whether `text` holds a key word, or a word of two Chinese characters (jieba cuts 年假 into 年 and 假)."""
    return _own_words(text) > 0 or _han(text) >= 2


def _han(text: str) -> int:
    """Chinese characters of `text` besides its question words."""
    return len(_HAN.findall(_ZH_ASKS.sub("", text)))


def _enough(clause: str, language: str) -> bool:
    """Whether a clause can be an ask of its own: it names something and is a clause, not a question word
    with little around it ("… and how early", "…，有什么办法？")."""
    if language == "zh":
        return _han(clause) >= MIN_HAN
    return _names_something(clause) and len(clause.split()) >= MIN_WORDS


def _with_own_words(clauses: list[str], language: str) -> list[str]:
    """`clauses` with each one that cannot be an ask of its own joined to the one before it (the first, to
    the one after)."""
    parts: list[str] = []
    for clause in clauses:
        if parts and not (_enough(clause, language) and _enough(parts[-1], language)):
            parts[-1] = _joined([parts[-1], clause], language)
        else:
            parts.append(clause)
    return parts


def _compared(question: str) -> list[Part]:
    """The two sides of a comparison, each searched as said."""
    for pattern in _COMPARISONS:
        found = pattern.search(question.strip())
        if found and _names_something(found["a"]) and _names_something(found["b"]):
            a, b = found["a"].strip(" ，,"), found["b"].strip(" ，,")
            return [Part(a, a), Part(b, b)]
    return []


def _joined(texts: list[str], language: str) -> str:
    return ("" if language == "zh" else " ").join(t for t in texts if t)


# What the answer says of a part that no passage found answers (by the gate, on the part's own evidence),
# after the quotes of the parts that are answered: what was not found, not that the knowledge base lacks it.
UNANSWERED = ByLanguage({
    "zh": "没有找到能明确回答“{part}”的原文。",
    "en": "No passage found answers “{part}” clearly enough to quote.",
    "de": "Keine gefundene Passage beantwortet „{part}“ klar genug, um sie zu zitieren.",
    "fr": "Aucun passage trouvé ne répond assez clairement à «\u202f{part}\u202f» pour être cité.",
    "es": "Ningún pasaje encontrado responde a «{part}» con la claridad suficiente para citarlo.",
    "pt": "Nenhuma passagem encontrada responde a «{part}» com clareza suficiente para ser citada.",
    "it": "Nessun passaggio trovato risponde a «{part}» in modo abbastanza chiaro da citarlo.",
    "ja": "「{part}」に明確に答える原文は見つかりませんでした。",
    "ko": "‘{part}’에 분명하게 답하는 원문을 찾지 못했습니다.",
})


def quotes_by_part(parts: list[AnsweredPart], choose: Callable[[AnsweredPart, int, int], list[list[Unit]]],
                   max_sentences: int = 3, max_chars: int = 900) -> tuple[list[list[Unit]], list[Part]]:
    """The excerpts answering each supported part, in the order asked — each part's chosen by `choose`
    (the part, its share of the sentences and of the characters) from its own evidence, a unit already quoted
    for an earlier part left out — and the parts no passage answers. Every supported part shares the budget
    (at least one unit each: a part's best unit is never cut); with one supported part, it has all of it."""
    supported = [p for p in parts if p.supported]
    if not supported:
        return [], [p.part for p in parts]
    sentences = max(1, math.ceil(max_sentences / len(supported)))
    chars = max_chars // len(supported)
    excerpts: list[list[Unit]] = []
    quoted: set[tuple[int, int, int]] = set()
    for answered in supported:
        for excerpt in choose(answered, sentences, chars):
            fresh = [u for u in excerpt if (u.source, u.start, u.end) not in quoted]
            if fresh:
                excerpts.append(fresh)
                quoted |= {(u.source, u.start, u.end) for u in fresh}
    return excerpts, [p.part for p in parts if not p.supported]
