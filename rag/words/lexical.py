"""BM25 tokenizer for Chinese (jieba), Latin-script and mixed text.

jieba and the stemmer are imported by the first `tokenize` (or `load_in_background`, as the pipeline is made),
not with this module: settings and commands that never tokenize (`status`, `teams-package`) do not pay for
jieba's import."""

from __future__ import annotations

import logging
import re
import threading
import unicodedata
from collections.abc import Callable
from functools import lru_cache
from types import ModuleType
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    import Stemmer

TOKENIZER_NAME = "aie-lexical-v2"
Idf = Callable[[list[str]], dict[str, float]]  # a knowledge base's inverse document frequency of each token
UNSEEN = "\x00"  # a token no text produces: its IDF is that of a word the knowledge base never uses


class TermStats(Protocol):
    """A knowledge base's BM25 term weights (rag.index.lexical_index.LexicalIndex, or Milvus's counts)."""

    def idf(self, tokens: list[str]) -> dict[str, float]: ...


def scoped_idf(idf: Idf, held: Callable[[list[str]], set[str]]) -> Idf:
    """`idf` as one asker sees the knowledge base: a token that only passages they may not read hold (`held`
    tells which of some tokens a passage they may read holds) weighs as a word it never uses. Whether the
    knowledge base uses a word is said to them ("does not mention …", rag.judging.near_miss) and steers what is
    looked for in its place (rag.words.synonyms): judged over the whole index, it would tell whether a document
    they may not read uses the word. The weights of the words they can read are the whole index's, as BM25
    scores them."""
    rare = idf([UNSEEN])[UNSEEN]

    def weights(tokens: list[str]) -> dict[str, float]:
        found = idf(tokens)
        seen = [t for t, w in found.items() if w < rare - 1e-9]
        readable = held(seen) if seen else set()
        return {t: w if w >= rare - 1e-9 or t in readable else rare for t, w in found.items()}

    return weights


_CJK = r"\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002ffff"
_WORD = rf"[^\W_{_CJK}]+"
_TOKEN = re.compile(rf"([{_CJK}]+)|({_WORD}(?:['’]{_WORD})*)")
_CJK_RUN = re.compile(rf"[{_CJK}]+")
_TOKEN_WORD = re.compile(rf"{_WORD}(?:['’]{_WORD})*")
_CLITIC = re.compile(r"^(.+?)['’](?:s|re?|ve?|d|ll|m)$")

# Function words that carry no topic: they only add noise to BM25 scores.
_ZH_STOP = frozenset(
    "的 了 和 与 及 或 是 在 有 为 对 把 被 就 都 而 也 要 我 你 他 她 它 我们 你们 他们 这 那 这个 那个 "
    "什么 怎么 怎么办 怎样 如何 吗 呢 吧 啊 呀 么 哪些 哪个 是否 可以 能 能否 会 应该 应当 需要 一个 "
    "之 其 所 以 于 则 即 由 从 等 中 上 下 个 该 此 将 已 并 但 如果 因为 所以 请问 一下 还是 还有 没有 "
    "多少 几 谁 哪 时候 情况 问题 现在 之后 以后 之前 以前".split()
)
_EN_STOP = frozenset(
    "a an the and or but if then else of to in on at by for with from as is are was were be been being "
    "it its this that these those there here i me my we our you your he him his she her they them their "
    "what which who whom whose when where why how do does did doing have has had having can could "
    "would should will shall may might must not no nor so than too very s t just about into over "
    "under again further once all any both each few more most other some such only own same up down out off".split()
)

STOP_WORDS = _ZH_STOP | _EN_STOP  # also given to the Milvus BM25 analyzer (rag/index/milvus_schema.py)

_log = logging.getLogger(__name__)
_jieba_lock = threading.Lock()
_jieba: ModuleType | None = None  # jieba, once its dictionary is loaded


def _segmenter() -> ModuleType:
    """jieba with its dictionary loaded (once, by whichever thread asks first)."""
    global _jieba
    if _jieba is not None:
        return _jieba
    with _jieba_lock:
        if _jieba is None:
            import jieba

            # Its dictionary messages are debug: shown only when the application logs at debug level.
            jieba.setLogLevel(min(logging.WARNING, logging.getLogger().getEffectiveLevel()))
            jieba.initialize()
            _jieba = jieba
    return _jieba


def load_in_background() -> threading.Thread | None:
    """Load jieba's dictionary in a thread of its own as the process starts (≈0.5 s), so that the first
    question does not wait for it (None: loaded already)."""
    if _jieba is not None:
        return None
    thread = threading.Thread(target=_segmenter, name="jieba-load", daemon=True)
    thread.start()
    return thread


@lru_cache(maxsize=1)
def _stemmer() -> Stemmer.Stemmer:
    import Stemmer

    return Stemmer.Stemmer("english")


def tokenize(text: str) -> list[str]:
    """Lower-cased, width-normalised tokens: jieba search-mode words for CJK runs, stemmed words otherwise."""
    jieba = _segmenter()
    text = unicodedata.normalize("NFKC", text).lower()
    tokens: list[str] = []
    stem = _stemmer().stemWord
    for match in _TOKEN.finditer(text):
        cjk, word = match.groups()
        if cjk:
            tokens.extend(t for t in jieba.cut_for_search(cjk) if t not in _ZH_STOP)
        elif word not in _EN_STOP:
            tokens.append(stem(word) if word.isascii() else word)
    return tokens


def function_word(word: str) -> bool:
    """Whether a word (as written, lower-cased, or as `tokenize` makes it) is a function word: a stop word, or
    an English contraction, which `tokenize` keeps whole — a negated auxiliary ("doesn't", "can't") or a stop
    word with its clitic ("what's", "i'm", "we'r" as stemmed). Never a topic the question asks about."""
    if word in STOP_WORDS or word.endswith(("n't", "n’t")):
        return True
    clitic = _CLITIC.match(word)
    return clitic is not None and clitic.group(1) in _EN_STOP


def stem_words(text: str) -> list[str]:
    """The stemmed, lower-cased Latin-script words of `text` without stop words: `tokenize`'s English side."""
    stem = _stemmer().stemWord
    return [stem(w) if w.isascii() else w for w in latin_words(text)]


def latin_words(text: str) -> list[str]:
    """The lower-cased Latin-script words of `text` without stop words, as `stem_words` finds them (unstemmed)."""
    return [w for w in _TOKEN_WORD.findall(unicodedata.normalize("NFKC", text).lower()) if w not in _EN_STOP]


def word_frequency(word: str) -> int:
    """How often jieba's dictionary saw `word` (0 when it does not know it)."""
    return _segmenter().dt.FREQ.get(word, 0) or 0


def without_cjk(text: str) -> str:
    """`text` with its Chinese runs blanked: what `tokenize` makes of it are exactly the Latin-script and
    digit tokens of `text` (names, numbers, codes like X.25), the ones that can match an English passage."""
    return _CJK_RUN.sub(" ", unicodedata.normalize("NFKC", text))


def words(text: str) -> list[str]:
    """The words of a text as a reader sees them: jieba's precise cut for Chinese (住房公积金, not 公积 and
    积金), the words themselves otherwise."""
    jieba = _segmenter()
    out: list[str] = []
    for match in _TOKEN.finditer(unicodedata.normalize("NFKC", text)):
        cjk, word = match.groups()
        out.extend(jieba.lcut(cjk) if cjk else [word])
    return out
