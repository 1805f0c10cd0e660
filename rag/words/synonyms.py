"""The knowledge base's own words for a question's words it never uses, by way of the other language:
"bike" → 自行车 → "bicycle", "cab" → 出租汽车 → "taxi", 国企 → state-owned enterprise → 国有企业. BM25 cannot
match a word no passage contains, and the embedded model relates such paraphrases only loosely.

Only a word the knowledge base never uses is looked up (its own words need no help); only through the other
language's words of two or more characters (a single character has too many meanings: "fitness" → 合 →
"peck") and the first sense of each, translated back as a whole; and only the words found that the
knowledge base does use are kept. Retrieval's BM25 looks for them too, the answer stage weighs them as
the question's words, and a near miss is cleared only when the best sentence holds one (rag.judging.evidence)."""

from __future__ import annotations

from functools import lru_cache

from rag.words.bilingual import american_spelling, chinese_for, first_sense, senses
from rag.words.jargon import plain_words
from rag.words.languages import detect_language, is_known
from rag.words.lexical import STOP_WORDS, UNSEEN, Idf, function_word, stem_words, tokenize, without_cjk, words
from rag.words.numbers import numeral

# How a question asks, not what it asks about: never a key term (nor looked up), though a handbook may never
# use them. Also the facet it asks of its topic — a limit, a rule, a procedure ("请客吃饭上限多少": the topic
# is the client meal; a handbook says 不超过, "up to"), and whom it is asked of (below).
ASKING = ("many much often long far soon get gets got allowed tell know please kind type sort way ways thing "
          "things anyone someone anybody somebody need needs happen happens like usual usually exactly really "
          "limit limits maximum minimum max min cap caps rule rules procedure amount "
          "一次 多长 多久 几点 几天 哪天 多少钱 有没有 是不是 可不可以 能不能 为什么 怎么样 什么样 一下 "
          "哪里 哪儿 什么时候 哪一年 哪年 多大 多远 多高 哪一类 哪一种 叫什么 是什么 "
          "上限 下限 最多 最高 最低 额度 标准 规定 要求 流程 手续 "
          # Chinese adverbs and modals a question is put with, as "usually", "exactly", "really" above: "报销要多久
          # 才能到账？" (才能 here is "only then can", not the dictionary's "talent"), "具体怎么报销？"
          "一般 通常 平时 平常 具体 到底 究竟 大概 大约 才能 只能 必须 一定 直接 马上 需不需要 "
          # "something came up", as "thing" above: the reason is no topic ("家里有事能请几天假？" asks for leave)
          "有事 "
          # The asker's employer and its people: a company's knowledge base is all about them, whether or not
          # it says "company" or "employee" ("公司的年假有多少天？" where the handbook never writes "company")
          "company companies employer firm employee employees staff colleague colleagues coworker coworkers "
          # (a newcomer too: jieba reads 新员工 as 新 + 员工 already, 新人 is one word)
          "公司 本公司 单位 员工 职工 同事 新人")

LIGHT_VERBS = frozenset("take make do have get go give fall".split())

# Chinese verbs written apart around a count or an aspect ("请几天假" is 请假, "加了两天班" 加班): the asker
# wrote the word, which no tokenizer sees whole. Those a workplace question asks about.
SEPARABLE = frozenset("请假 休假 放假 出差 加班 值班 上班 请客 开会 住院 看病 生病 结婚 离婚 见面 报名".split())
APART = 3  # words between the verb's two characters at most ("请 了 三 天 假" is jieba's 请/了/三天/假)


@lru_cache(maxsize=1)
def asking() -> frozenset[str]:
    return frozenset(tokenize(ASKING))


def asks(word: str) -> bool:
    """Whether a word of a question (a token, or as written, lower-cased) is how it asks, not what about:
    `ASKING`'s words and the function words `tokenize` keeps ("what's", "doesn't")."""
    return word in asking() or function_word(word)


def is_key(token: str) -> bool:
    """Whether a token of a question is one of its key words: not how it asks, nor a single Chinese
    character (丢 of 发票丢了 means too many things to say what the question is about)."""
    return not asks(token) and (len(token) > 1 or token.isascii())


@lru_cache(maxsize=4096)
def round_trip(word: str, language: str) -> tuple[str, ...]:
    """Words of `language` the bilingual dictionary gives for `word` by way of the other language: its first
    sense translated back as a whole (a phrase's single words go astray: "year-end bonus" → 每年)."""
    found: list[str] = []
    if language == "zh":
        gloss = first_sense(word)
        # A verb that means little on its own and its object ("take a taxi"): the object alone, translated
        # back, where the Chinese word says it too (打车 → 出租车; not 上任, "take office", → 办公室).
        named = [c for c in _back_to_chinese(light_verbs_object(gloss), word) if set(c) & set(word)]
        found = _back_to_chinese(gloss, word) + named
    else:
        # Workplace shorthand's plain words ("PTO": "annual leave"), then a British spelling: the knowledge
        # base may spell it the American way ("centre": "center").
        found = list(plain_words(word))
        found += [spelled] if (spelled := american_spelling(word)) != word.lower() else []
        for _, chinese in chinese_for(word):
            senses = [first_sense(c) for c in chinese if len(c) > 1]
            found += [s for s in senses if s and len(s.split()) == 1 and s != word.lower()]
    # ... never a number: 国庆节, "PRC National Day", is 十一 ("October 1st") too, which the knowledge base
    # writes in every date and article number (三月三十一日, 第十一条)
    return tuple(w for w in dict.fromkeys(found) if w not in STOP_WORDS and not numeral(w))


def _back_to_chinese(gloss: str, word: str) -> list[str]:
    """The Chinese words (other than `word`) that translate the whole of an English gloss — as written, not
    only by its stems: "computer" is not 计算's "compute" (电脑 brought 计算 in, and with it the meal-allowance
    article's 按五十元计算, "calculated at fifty yuan")."""
    if not gloss:
        return []
    stems = stem_words(gloss)
    found = [c for phrase, chinese in chinese_for(gloss) if len(phrase.split()) == len(stems)
             for c in chinese if len(c) > 1 and c != word]
    return [c for c in found if gloss.lower() in {s.lower() for _, said in senses(c, "zh") for s in said}]


def light_verbs_object(gloss: str) -> str:
    """The object of a gloss made of a verb that means little on its own and one object ("taxi" of "take a
    taxi"); "" for any other gloss."""
    parts = gloss.split()
    rest = [p for p in parts[1:] if p not in STOP_WORDS]
    return rest[0] if len(parts) > 1 and parts[0] in LIGHT_VERBS and len(rest) == 1 else ""


def synonyms(question: str, idf: Idf) -> dict[str, tuple[str, ...]]:
    """Each word of `question` the knowledge base never uses, with the knowledge base's tokens for it (only
    words that have some); and each verb it writes apart that the knowledge base uses, with its tokens."""
    language = detect_language(question)
    if not is_known(language):  # the dictionary reads only the knowledge base's two languages
        return {}
    surfaces = [w for w in dict.fromkeys(words(question)) if w.strip() and len(w) >= 2]
    tokens = {w: tokenize(w) for w in surfaces}
    weights = idf(sorted({t for found in tokens.values() for t in found} | {UNSEEN}))
    rare = weights[UNSEEN] - 1e-9
    out: dict[str, tuple[str, ...]] = {}
    for word in surfaces:
        if not tokens[word] or any(asks(t) for t in tokens[word]):
            continue
        if any(weights.get(t, rare + 1) < rare for t in tokens[word]):
            continue  # the knowledge base uses it (or a part of it)
        found = {w: tokenize(w) for w in round_trip(word, language)}
        if not any(found.values()):
            continue
        weighed = idf(sorted({t for parts in found.values() for t in parts}))
        used = {w: [p for p in parts if weighed.get(p, rare + 1) < rare] for w, parts in found.items()}
        kept = tuple(dict.fromkeys(t for w, parts in used.items() for t in _standing_for(w, parts)))
        if kept:
            out[word] = kept
    if language == "zh":
        apart = [verb for verb in written_apart(question) if verb not in out]
        used = idf(sorted({t for verb in apart for t in tokenize(verb)} | {UNSEEN}))
        out |= {verb: tuple(tokenize(verb)) for verb in apart
                if all(used.get(t, rare + 1) < rare for t in tokenize(verb))}
    return out


def written_apart(question: str) -> list[str]:
    """The separable verbs (`SEPARABLE`) `question` writes apart, each character a word of its own: 请假 of
    "家里有事能请几天假？", not of "请问年假有几天？" (请问, 年假) nor "没休完的年假" (年假)."""
    cut = [w for w in words(question) if w.strip()]
    found = []
    for n, first in enumerate(cut):
        for later in cut[n + 2 : n + 2 + APART]:
            if (verb := first + later) in SEPARABLE and verb not in found:
                found.append(verb)
    return found


def _standing_for(word: str, parts: list[str]) -> list[str]:
    """Of the tokens of `word` the knowledge base uses, those that stand for it: all of them, except where
    the word is Chinese and they do not spell it whole — 国有企业's 国有 and 企业 do; 计算机's 计算 alone is
    "calculate" (电脑 → 计算机 brought in the meal-allowance article's 按五十元计算)."""
    if word in parts or without_cjk(word).strip():
        return parts
    covered = set()
    for part in parts:
        start = word.find(part)
        covered |= set(range(start, start + len(part))) if start >= 0 else set()
    return parts if len(covered) == len(word) else []


def expanded(question: str, idf: Idf) -> str:
    """`question` with the knowledge base's words for those of its words it never uses appended, each once
    when BM25 tokenises the text again (a compound brings its parts back: 国有企业 gives 国有 and 企业)."""
    extra: list[str] = []
    produced: set[str] = set()
    for token in sorted((t for found in synonyms(question, idf).values() for t in found), key=len, reverse=True):
        if token not in produced:
            extra.append(token)
            produced.update(tokenize(token))
    return f"{question} {' '.join(extra)}" if extra else question
