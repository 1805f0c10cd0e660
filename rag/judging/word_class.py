"""Whether a word of a question can name what it asks about, by its part of speech: a noun, a verb, a name
can; an adverb, a pronoun, a numeral with its measure word, a localiser, a preposition, a particle never can
("专门" specially, "那边" over there, "一块" together, "之内" within — a knowledge base need not write them, and
"the knowledge base does not mention “之内”" says nothing). Chinese words by jieba's tagger (jieba.posseg, in
the question's own context); English words by the tags of their Chinese translations in the bilingual
dictionary — an English word none of whose translations is a content word ("actually": 实际上, an adverb) is
how the question is put. A word the tagger cannot tag as one word, or the dictionary does not know, may
name a topic."""

from __future__ import annotations

from functools import lru_cache

from rag.words.bilingual import chinese_for
from rag.words.lexical import without_cjk

# jieba's tags (ICTCLAS) of word classes that never name a topic: adverbs (d), localisers (f), numerals and
# measure words (m, mq, q), pronouns (r), prepositions (p), conjunctions (c), particles (u…, y), interjections
# (e), onomatopoeia (o), status words (z), prefixes and suffixes (h, k), adjectives used as adverbs (ad) and
# non-words (x). Adjectives may name it ("unpaid" leave, 远程 work), verbs and nouns do.
FUNCTION_TAGS = ("d", "f", "m", "q", "r", "p", "c", "u", "y", "e", "o", "z", "h", "k", "ad", "x")


def _function_tag(flag: str) -> bool:
    """Whether a jieba tag is of a function word class ("eng", a Latin-script word, is none)."""
    return flag != "eng" and flag.startswith(FUNCTION_TAGS)


@lru_cache(maxsize=4096)
def _tags(text: str) -> tuple[tuple[str, str], ...]:
    from jieba import posseg  # (jieba's dictionary is loaded by rag.words.lexical before any word is judged)

    return tuple((pair.word, pair.flag) for pair in posseg.lcut(text))


def chinese_tag(word: str, question: str = "") -> str:
    """jieba's tag of a Chinese `word`, as the question uses it where it cuts the word out whole, else of the
    word alone when it is one word to the tagger ("" when neither)."""
    for found, flag in _tags(question) if question else ():
        if found == word:
            return flag
    alone = _tags(word)
    return alone[0][1] if len(alone) == 1 else ""


def can_name_a_topic(word: str, language: str, question: str = "") -> bool:
    """Whether `word` (of a question in `language`, as it is written) belongs to a class of words that can
    name what a question asks about: not an adverb, pronoun, numeral, localiser, particle …"""
    if language == "zh" and not without_cjk(word).strip():
        flag = chinese_tag(word, question)
        return not flag or not _function_tag(flag)
    if language == "en":
        return not _english_function_word(word.lower())
    return True


@lru_cache(maxsize=4096)
def _english_function_word(word: str) -> bool:
    """Whether each Chinese translation of a single English word is of a function class (none: unknown)."""
    if len(word.split()) != 1:
        return False
    found = [c for phrase, chinese in chinese_for(word) if len(phrase.split()) == 1 for c in chinese]
    tags = [chinese_tag(c) for c in found]
    return bool(tags) and all(tag and _function_tag(tag) for tag in tags)

