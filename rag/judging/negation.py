"""Whether a question asks what is *not* so, and whether a sentence says anything is not.

The embedded model reads "X is not the main court" and "X is the main court" alike, so a question about
what is not done ("What is not used to measure complexity?") finds the sentence saying what is done, and
quoting it answers the opposite of the question. A question asks what is not when it asks which, what,
who… with a negation in its main clause ("If I cannot log in, whom do I call?" does not: there the negation
sets the scene; "whether or not" and "not only" are no negation; a yes-or-no question is answered by the
rule either way). A sentence denies when it holds any word that denies, refuses, forbids or excludes — it
may answer the question in other words, so it is read generously.

Per language, by its own words: a question in a language listed here is checked against a sentence in
one listed here (a Chinese question against an English sentence reads "not" there).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TypeVar

from rag.judging import calibration
from rag.words.lexical import words

T = TypeVar("T")
# A sentence that denies (or gives the kind of answer asked for, rag.judging.answer_kind) may lead the answer in the
# best one's place when it scores this close (the runner-ups' margin, rag.judging.extractive.APART). Measured on squad2's answered questions with any negation
# (209 unanswerable, 32 answerable): .01 refused 123 at 3 false refusals, the best sentence alone 131 / 5.
# With the rule below, all of squad2: 310 of 1,527 unanswerable refused (189 before), 51 of 1,278 falsely
# (48 before).
AS_CLOSE = calibration.default().quotes.as_close  # .01 (rag/judging/calibration.json)

# Negations a question asks by, in its main clause (lower case; whole words).
_ASKING = {
    "en": {"not", "never", "no", "none", "nothing", "neither", "nor", "cannot", "nobody", "nowhere"},
    "de": {"nicht", "nie", "niemals", "kein", "keine", "keinen", "keinem", "keiner", "keines", "nichts"},
    "fr": {"pas", "jamais", "aucun", "aucune", "rien", "personne", "ni"},
    "es": {"no", "nunca", "jamás", "ningún", "ninguna", "ninguno", "nada", "nadie", "ni"},
    "it": {"non", "mai", "nessun", "nessuna", "nessuno", "niente", "nulla", "né"},
    "pt": {"não", "nunca", "jamais", "nenhum", "nenhuma", "nada", "ninguém", "nem"},
    "zh": {"不", "没", "没有", "未", "无", "别", "不是", "不能", "不得", "不会", "不要", "不可", "不可以", "不用",
           "不必", "不行", "不准", "不许", "不该", "不应", "不应该", "无法", "没法", "未能", "不予", "不属于"},
}
# ... and the words a sentence may deny by besides those: whole words, then stems (a prefix of five letters
# or more, so that "ban" does not meet "bank").
_DENYING = {
    "en": ({"without", "non", "only", "ban", "bans", "banned", "unable", "instead", "rather", "except"},
           ("refus", "denie", "denia", "fails", "failed", "failure", "lacks", "lacked", "prohibit", "forbid",
            "forbad", "exclud", "exempt", "excepti")),
    "de": ({"ohne", "nur", "außer", "statt", "anstatt", "ausgenommen", "ausgeschlossen"},
           ("verbot", "verboten", "verweiger", "untersag")),
    "fr": ({"sans", "sauf", "seulement", "uniquement", "non", "ne", "n"}, ("interdi", "refus", "exclu")),
    "es": ({"sin", "excepto", "salvo", "solo", "sólo", "únicamente"}, ("prohib", "rechaz", "exclu")),
    "it": ({"senza", "tranne", "eccetto", "solo", "soltanto"}, ("vietat", "rifiut", "esclus")),
    "pt": ({"sem", "exceto", "salvo", "apenas", "somente"}, ("proib", "recus", "exclu")),
}
# A Chinese sentence denies by a character as often as by a word (不予受理, 未休, 无需, 禁止, 免费).
_DENYING_ZH = re.compile(r"[不没未无非否禁免拒勿别仅只]")
# Not a negation: "whether or not", "may or may not", "not only", "no longer", "no matter" (and kin).
_IDIOMS = re.compile(r"\b(?:or (?:\w+ )?not|not only|no longer|no matter|no more than|no later than"
                     r"|no fewer than|no less than|nicht nur|non seulement|no sólo|no solo|non solo|não só"
                     r"|não apenas)\b"
                     r"|无论|不管|不仅|不但|不过|不少|不断|非常", re.IGNORECASE)
# A clause that sets the scene for the question ("if I cannot log in, ..."): to its end or the next comma.
# "when" and its kin ask a question of their own at the start ("When is the office not open?").
_SCENE = re.compile(r"(?:\b(?:if|whenever|unless|because|since|while|although|though|once|in case|wenn|falls"
                    r"|weil|obwohl|si|lorsque|parce que|porque|aunque|perché|embora)\b"
                    r"|(?<=\w[\s,])(?:when|quand|cuando|quando)\b"
                    r"|如果|要是|假如|假设|万一|因为|由于|虽然|即使)[^,，;；?？]*", re.IGNORECASE)
# The words a question asks for something by (which, what, who…); Chinese's, inside longer words (什么时候).
_WHICH = {
    "en": {"what", "which", "who", "whom", "whose", "where", "when", "how", "why"},
    "de": {"was", "welche", "welcher", "welches", "welchen", "welchem", "wer", "wen", "wem", "wessen", "wo",
           "wann", "wie", "warum", "weshalb", "wieso", "wofür", "wozu"},
    "fr": {"que", "qu", "quoi", "quel", "quelle", "quels", "quelles", "qui", "où", "quand", "comment",
           "pourquoi", "lequel", "laquelle", "lesquels", "lesquelles"},
    "es": {"qué", "cuál", "cuáles", "quién", "quiénes", "dónde", "cuándo", "cómo", "cuánto", "cuántos",
           "cuánta", "cuántas"},
    "it": {"che", "cosa", "quale", "quali", "chi", "dove", "quando", "come", "perché", "quanto", "quanti",
           "quante"},
    "pt": {"que", "qual", "quais", "quem", "onde", "quando", "como", "quanto", "quantos", "quanta",
           "quantas"},
}
_WHICH_ZH = re.compile(r"什么|哪|谁|何|几|多少|怎么|怎样|如何")
# (the same question words, read by rag.judging.parts where a second ask begins)
QUESTION_WORDS, QUESTION_WORDS_ZH = _WHICH, _WHICH_ZH
_QUESTIONS = re.compile(r"[?？。!！]")
_ENGLISH_NOT = re.compile(r"n't\b|\bcan ?not\b", re.IGNORECASE)


def asks_what_is_not(question: str, language: str) -> bool:
    """Whether `question` (in `language`) asks for what is not so: one of its questions asks which, what,
    who… with a negation in its main clause. A yes-or-no question is answered by the rule either way
    ("Can I skip the VPN in a hotel?": "Use the VPN on every network")."""
    if language not in _ASKING:
        return False
    return any(_asks_for_what_is_not(part, language) for part in _QUESTIONS.split(question) if part.strip())


def _asks_for_what_is_not(question: str, language: str) -> bool:
    main = _SCENE.sub(" ", _IDIOMS.sub(" ", question))
    if language == "zh":  # the question comes last, after the clauses that set the scene (…未能记录用电量的，…)
        main = re.split(r"[，,；;]", main.rstrip("，,；; \t"))[-1]
    found = [w.lower() for w in words(main)]
    if not (_WHICH_ZH.search(main) if language == "zh" else any(w in _WHICH[language] for w in found)):
        return False
    if language == "en" and _ENGLISH_NOT.search(main):
        return True
    return any(w in _ASKING[language] for w in found)


def denies(sentence: str, language: str) -> bool:
    """Whether `sentence` (in `language`) says that anything is not so — or, in a language not listed
    here, True: nothing can be told, so nothing is held against it."""
    if language == "zh":
        return bool(_DENYING_ZH.search(sentence))
    asking = _ASKING.get(language)
    if asking is None:
        return True
    if language == "en" and _ENGLISH_NOT.search(sentence):
        return True
    whole, stems = _DENYING.get(language, (set(), ()))
    return any(w in asking or w in whole or w.startswith(stems) for w in (w.lower() for w in words(sentence)))


def denial_first(question: str, language: str, ranked: list[T], text: Callable[[T], str],
                 language_of: Callable[[T], str], score: Callable[[T], float]) -> list[T] | None:
    """`ranked` (best first) as it answers `question`, in `language`: unchanged when the question asks
    nothing of what is not so, or its best sentence denies something; led by the best one that does and
    scores within `AS_CLOSE` of the best one; None when none does — quoted, the best sentence would state
    the opposite of what was asked."""
    if not ranked or not asks_what_is_not(question, language):
        return ranked
    return led_if_close(ranked, score, lambda candidate: denies(text(candidate), language_of(candidate)))


def led_if_close(ranked: list[T], score: Callable[[T], float], fits: Callable[[T], bool],
                 margin: float = AS_CLOSE) -> list[T] | None:
    """`ranked` (best first, not empty) led by the best one that `fits` of those scoring within `margin` of
    the best one; None when none of those fits."""
    best = score(ranked[0])
    for candidate in ranked:
        if score(candidate) < best - margin:
            return None
        if fits(candidate):
            return [candidate] + [c for c in ranked if c is not candidate]
    return None
