"""The embedded model's cosines, made comparable across languages.

A Chinese question scores its answer lower in an English passage than in a Chinese one, and unrelated
passages closer to the answer: each (question, passage) language pair has its own scale. A scale is
described by two medians of real questions' best cosine: questions about something else entirely
(unrelated) and questions the passages answer. A cosine is moved between scales by the line through
those two anchors. benchmarks/calibrate_pairs.py measures them (results/calibrate_pairs.json):

  zh→en: squad2/questions-zh (answerable) · lawref questions (unrelated), against squad2/docs
  en→en: squad2 answerable · lawref/questions-en (unrelated), against squad2/docs
  en→zh: lawref/questions-en (answerable) · squad2 questions (unrelated), against all of lawref
  zh→zh: lawref questions (answerable) · squad2/questions-zh (unrelated), against all of lawref

Two uses: reading a cross-language cosine with the calibrated gate model of the passage's language
(`on_passage_scale`), and ranking candidates of both languages for one question (`comparable`).
"""

from __future__ import annotations

from rag.words.bilingual import translate
from rag.judging import calibration
from rag.words.languages import KNOWN

Level = str  # "dense": a whole passage; "sentence": a quotable unit with its title and headings

# (question language, passage language) -> level -> (unrelated median, answerable median), as
# benchmarks/calibrate_pairs.py measured them (rag/judging/calibration.json; en -> zh measured partly against
# the translated question, TRANSLATED_DENSE: plain cosines were .743 / .79)
_FITTED = calibration.default().scales
ANCHORS: dict[tuple[str, str], dict[Level, tuple[float, float]]] = {
    pair_: dict(levels) for pair_, levels in _FITTED.anchors.items()}
# A question in a language the dictionary does not know (rag.words.languages) is on the scale of the pair into
# the passage's language from the other known one: German, French and Japanese versions of squad2-zh's
# questions put their answer at a median best passage cosine of .819, .839 and .816 (the Chinese ones
# .813), and the handbook's questions in seven such languages the unrelated squad2 articles at .764-.794
# (the Chinese ones .768). Not measured into Chinese passages (no such questions at hand).
ACROSS_FROM_OTHER = {"en": "zh", "zh": "en"}


def pair(question: str, passage: str) -> tuple[str, str]:
    """The (question, passage) language pair whose scale a cosine is read on. Where neither side's pair was
    measured: one language other than the known two is read on English's own scale (benchmarks/data/handbuch:
    its answerable German questions put their best sentence at .85-.92, its near-topic and unrelated ones at
    .75-.84, as English questions on English articles sit, answerable median .876, unrelated .819), and a
    question across into a passage of such a language on the scale measured into English passages."""
    if question in KNOWN and passage in KNOWN:
        return question, passage
    if question == passage:
        return "en", "en"
    if passage in ACROSS_FROM_OTHER and question not in KNOWN:
        return ACROSS_FROM_OTHER[passage], passage
    return "zh", "en"


# How far toward its own language's scale an other-language passage (or sentence) is lifted when it
# competes with passages in the question's language. Where a knowledge base says the same thing in both
# languages (a China office policy and a global one), a full lift lets the other language's version
# displace the asker's own; none, and an answer only the other language holds never reaches the asker.
# Chosen on the handbook questions (benchmarks/data/handbook_questions.jsonl; BENCHMARKS.md has the
# table). A knowledge base in one language is not affected: then every candidate is lifted alike.
# zh -> en: dense .75, sentence .5. en -> zh: measured partly against the translated question
# (TRANSLATED_DENSE), an English question's Chinese passages sit on its own scale already (both unrelated
# medians .8138): a dense lift let unrelated leave rules into English questions' top passages (handbook answers
# holding the gold, dense lift 0 / .25: .694 / .667); sentence .25. (rag/judging/calibration.json)
LIFT: dict[tuple[str, str], dict[Level, float]] = {pair_: dict(levels) for pair_, levels in _FITTED.lift.items()}


# Question language -> how much of an other-language passage's (or sentence's, or word's) cosine is measured
# against the question translated word for word (rag.words.bilingual) instead of the question itself: the model
# relates a bag of the passages' own words to them more closely than a question in another language. English
# questions on all of lawref: R@5 .231 -> .500 at 0.6 (.462 at 0.5, .500 at 0.7); Chinese questions gain
# nothing from their English gloss (squad2-zh R@5 .974 -> .947 at any share), so they are not translated.
TRANSLATED_DENSE = dict(_FITTED.translated_dense)  # en: 0.6 (rag/judging/calibration.json)


def translation_for(text: str, language: str) -> str:
    """What a cosine from `text` (in `language`) to the other language is measured partly against: `text`
    translated word for word; "" where that language's cosines are not (TRANSLATED_DENSE)."""
    if not TRANSLATED_DENSE.get(language):
        return ""
    translated = translate(text, language)
    return translated if translated.strip() and translated != text else ""


def measured_across(plain: float, translated: float, language: str) -> float:
    """A cosine across languages from a text in `language`: `plain` against the text itself, `translated`
    against its translation (`translation_for`), weighed by TRANSLATED_DENSE."""
    share = TRANSLATED_DENSE.get(language, 0.0)
    return (1 - share) * plain + share * translated


def rescale(cosine: float, source: tuple[str, str], target: tuple[str, str], level: Level) -> float:
    """`cosine`, measured on `source`'s scale, on `target`'s (unchanged when a scale is not known)."""
    if source == target or source not in ANCHORS or target not in ANCHORS:
        return cosine
    (su, sa), (tu, ta) = ANCHORS[source][level], ANCHORS[target][level]
    return tu + (cosine - su) * (ta - tu) / (sa - su)


def on_passage_scale(cosine: float, question: str, passage: str, level: Level) -> float:
    """As if the question had been asked in the passage's language: what that language's gate model reads."""
    return rescale(cosine, pair(question, passage), pair(passage, passage), level)


def comparable(cosine: float, question: str, passage: str, level: Level) -> float:
    """What ranks passages (and sentences) of both languages against each other for one question: an
    other-language cosine lifted part of the way to its own language's scale (`LIFT`)."""
    lift = LIFT.get(pair(question, passage), {}).get(level, 0.0)
    return cosine + lift * (on_passage_scale(cosine, question, passage, level) - cosine)


def scale_of(language: str) -> str:
    """The known language whose own scale (and calibrated gate model) a passage language's cosines are read
    on: itself, or English's for any other (`pair`)."""
    return pair(language, language)[1]


def same_language_threshold(value: float, language: str, level: Level, calibrated_in: str = "en") -> float:
    """A threshold set on one language's scale, on another's."""
    return rescale(value, (calibrated_in, calibrated_in), pair(language, language), level)
