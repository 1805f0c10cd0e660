"""The question's key terms that no candidate passage mentions, in any words the embedded model relates to
them: a near miss ("dog" when the handbook speaks only of the office; "stock options" where the benefits
and leave rules match only the question's setting). The answer then says so above the closest quotes, and
the gate weighs it (rag.judging.evidence gathers it with the sentence evidence).

A word counts as missing when the knowledge base never uses it (its IDF is an unseen word's), no passage
holds it or, across the two languages the dictionary knows, any of its translations, and the model relates
it to none of the best units (unless such words are what the question is about). Names and numbers are
the gate's `missing_names`; single Chinese characters are too ambiguous to count."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from typing import TYPE_CHECKING

from rag.words.bilingual import chinese_for, first_sense, kind_of, senses, translations
from rag.words.languages import codes_in, is_known, script_language, stop_words
from rag.words.lexical import UNSEEN, Idf, function_word, stem_words, tokenize, without_cjk, word_frequency, words
from rag.judging import calibration
from rag.judging.qualifiers import absent_qualifiers, doer_of
from rag.judging.quotable import embedded_unit_text
from rag.judging.scales import TRANSLATED_DENSE, comparable, measured_across, same_language_threshold, translation_for
from rag.judging.word_class import can_name_a_topic
from rag.words.synonyms import asks, is_key, light_verbs_object
from rag.words.text import sentence_spans
from rag.types import Chunk

if TYPE_CHECKING:
    from rag.judging.evidence import ScoredUnit

# (terms, texts[, texts as queries]) -> cosine of each term (embedded as a query) to each text (embedded as a
# passage, or as a query too): one row per term
TermSimilarity = Callable[..., list[list[float]]]

# The thresholds below are in rag/judging/calibration.json (rag.judging.calibration), with what each was chosen on.
_FITTED = calibration.default().near_miss

# A key term is related to a candidate when its cosine to one of the best units reaches this (same
# language: 酒店 ↔ a sentence on 住宿 0.86, dog ↔ the onboarding paragraph 0.79).
RELATED_TERM = _FITTED.related_term
# ... and a near miss only when no sentence matches the question well: a paraphrase the model cannot
# relate word by word ("husband" for "married") comes with a sentence that matches as a whole (squad2:
# notes on 11.7 % of answerable questions without this bound, 0.8 % with it). On the scale of the
# question's language (set on English's; rag.judging.scales).
NEAR_MISS_BELOW = _FITTED.near_miss_below
# ... unless the words no candidate mentions are what the question is about, and the sentences match only
# its setting: "Do I get stock options?", "Can I get a bonus at the end of the year?" match the benefits
# and leave rules at .84-.86, while "To where did Ethelred flee?" matches the sentence that names Ethelred.
# Then a word is a near miss when the model relates it to no best unit at this cosine (in a domain the
# sentences are close to most of its words: "bonus" .835, "bank" .838 against the handbook's), the missing
# words hold this share of the question's key words, no sentence of its language holds more than
# MATCHED_SAID of them, and the closest writes none of its names (English; squad2's answerable questions:
# notes on 6 → 10 of 1,278, BENCHMARKS.md). Where no sentence matches well, words the knowledge base never
# uses that hold this share are a near miss whatever the model relates them to.
MATCHED_RELATED = _FITTED.matched_related
TOPIC_SHARE = _FITTED.topic_share
MATCHED_SAID = _FITTED.matched_said
# Language pairs where the model's relatedness also vets a word the dictionary finds missing: en -> zh (on
# lawref-en it dropped 5 of 7 false warnings: "landlord" for the statutes' 出租人); not zh -> en, where it
# relates every Chinese word to the English policies (年终奖, 丧假, 加班费 were no longer caught).
MODEL_RELATES_ACROSS = {("en", "zh")}
# A missing word is said otherwise when one of the best units' own words is this close to it, both embedded as
# queries (multilingual-e5-small: kid/child .967, ballot/vote .926, wife/spouse .926, extra/additional .937;
# bonus/benefits .909, dog/pets .908, broadband/internet .882 are other things)
SAME_WORD = _FITTED.same_word
_NAME = re.compile(r"(?<!^)(?<![.?!]\s)\b([A-Z][\w'’.-]*|\d[\d,.]*)|(\d[\d,.]*)")
_NUMBER = re.compile(r"^[\d.,]+$")
_POSSESSIVE = re.compile(r"['’]s$")


def embedded_text(scored: ScoredUnit, sources: list[Chunk]) -> str:
    """A scored unit as it is embedded (rag.judging.quotable.embedded_unit_text)."""
    return embedded_unit_text(sources[scored.unit.source], scored.unit)


def missing_terms(question: str, language: str, question_terms: list[str], sources: list[Chunk],
                  languages: list[str], units: list[ScoredUnit], idf: Idf,
                  terms: TermSimilarity | None, paraphrased: bool = False) -> tuple[str, ...]:
    """The question's key words the candidates do not say (`_missing_words`) and its qualifiers — a year, a
    version, a name — the knowledge base never writes (rag.judging.qualifiers), however well the rest
    matches."""
    found = _missing_words(question, language, question_terms, sources, languages, units, idf, terms,
                           paraphrased)
    if not sources or not units or not is_known(language):
        return found
    found = _not_said_otherwise(found, language, sources, languages, units, terms)
    named = absent_qualifiers(question, language, sources, languages, idf)
    within = {t for q in named for t in tokenize(q)}
    return tuple(dict.fromkeys((*named, *(w for w in found if not set(tokenize(w)) <= within))))


def _not_said_otherwise(found: tuple[str, ...], language: str, sources: list[Chunk], languages: list[str],
                        units: list[ScoredUnit], terms: TermSimilarity | None) -> tuple[str, ...]:
    """Of the missing words `found`, those the shortlisted units do not say in a word of their own that the
    model reads as the same word ("kid" where the leave policy says "child", "ballot" where it says "vote"):
    the cosine of the two words, both embedded as queries, reaches `SAME_WORD`. A question's names are never
    said otherwise. Words of the question's language only (across languages the dictionary decides)."""
    if not found or terms is None:
        return found
    vocabulary = _vocabulary([u for u in units if languages[u.unit.source] == language], sources, language)
    bare = {w: _POSSESSIVE.sub("", w) for w in found if _one_word(_POSSESSIVE.sub("", w), language)}
    if not vocabulary or not bare:
        return found
    rows = terms(list(bare.values()), vocabulary, True)
    said = {w for (w, word), row in zip(bare.items(), rows)
            if max((c for c, v in zip(row, vocabulary) if not _formed_from(word.lower(), v)), default=0.0)
            >= SAME_WORD}
    return tuple(w for w in found if w not in said)


def _formed_from(word: str, other: str) -> bool:
    """Whether one of two words holds the other past its start: another word formed from it ("unpaid" of
    "paid"), which the model reads as close as a synonym."""
    return (other in word and not word.startswith(other)) or (word in other and not other.startswith(word))


def _one_word(word: str, language: str) -> bool:
    """A single word in the question's language, not a name (capitalised) nor a code."""
    if language == "zh":
        return not without_cjk(word).strip()
    return word.isalpha() and not word[:1].isupper()


def _vocabulary(units: list[ScoredUnit], sources: list[Chunk], language: str) -> list[str]:
    """The distinct words of `units` and of their passages' titles and headings, as written (lower-cased),
    that can name something: not function words, numbers or codes."""
    seen: dict[str, None] = {}
    for scored in units:
        text = embedded_text(scored, sources)
        for word in words(text):
            lowered = word.lower()
            if len(lowered) < 2 or function_word(lowered) or not lowered.isalpha():
                continue
            if (language == "zh") == (not without_cjk(lowered).strip()):
                seen.setdefault(lowered, None)
    return list(seen)


def _setting_the_scene(question: str, word: str) -> bool:
    """Whether `word` is said only in a sentence of the question that does not ask — the asker's situation,
    told before the question or after it ("My wife and I are adopting a baby. How long can I stay home?"):
    what is asked is the question sentence's, and the knowledge base not writing "wife" says nothing of
    whether it answers.
    A name, a year or a version there still scopes the question ("I work in Texas. …": rag.judging.qualifiers
    judges those wherever they stand)."""
    sentences = [question[a:b].strip() for a, b in sentence_spans(question, clauses=False)]
    asking = [s for s in sentences if s.endswith(("?", "？"))]
    if not asking or len(asking) == len(sentences):
        return False
    tokens = set(tokenize(word))
    return bool(tokens) and not any(tokens & set(tokenize(s)) for s in asking)


def _missing_words(question: str, language: str, question_terms: list[str], sources: list[Chunk],
                   languages: list[str], units: list[ScoredUnit], idf: Idf,
                   terms: TermSimilarity | None, paraphrased: bool = False) -> tuple[str, ...]:
    """Key terms of the question (in `language`) — words the knowledge base never uses — that no
    candidate passage mentions and that the embedded model does not relate to any of the best units. Where a
    sentence matches the question well, only when they are its topic (`_said_little`, `TOPIC_SHARE`) and it
    is not `paraphrased` (the best sentence holds the knowledge base's own word for one of its words: "leave"
    for "vacation", where "Can my manager refuse my vacation request?" lacks "refuse").
    Names and numbers are the gate's `missing_names`; single Chinese characters are too ambiguous to count."""
    below = same_language_threshold(NEAR_MISS_BELOW, language, "sentence")
    if not sources or terms is None or not units:
        return ()
    # Across languages the model's cosines sit too close together to say a sentence matches well; there
    # the dictionary alone decides (every translation of the word absent from the knowledge base) — and only
    # between the two languages it knows. In one language it does not know (a German question on a German
    # handbook), the knowledge base's own words tell as in English: "Hund" is a word it never uses.
    across = languages[units[0].unit.source] != language
    if across and not (is_known(language) and is_known(languages[units[0].unit.source])):
        return ()  # no word can be told absent across into or out of such a language (its codes can)
    if not is_known(language) and not _spaced_words(question, language):
        return ()  # Japanese and Korean attach particles and endings to their words: 休暇は, 휴가는
    own = [u for u in units if languages[u.unit.source] == language]  # what a sentence of this language says
    matched = not across and max(u.cosine for u in own) >= below
    if matched and language != "en":
        return tuple(w for w in _absent_in_both(question, language, languages, sources, idf)
                     if not _setting_the_scene(question, w))
    if matched and (paraphrased or not _said_little(question, language, own)):
        return ()  # a sentence matches the question well, and says what it is about
    present = _words_of(sources)
    rare = idf([UNSEEN])[UNSEEN]
    if across:  # the question's words are not the passages': the dictionary says which it lacks
        surfaces = _missing_across(question, language, present, idf, rare)
        if language in languages:  # ... and of the words it cannot translate, those no passage uses either
            # (a word it translates only as part of a phrase — "checkup" of "health checkup", 体检 — is judged
            # with its phrase above)
            phrased = {t for word, found in senses(question, language) if found for t in tokenize(word)}
            surfaces += [w for w in _unseen(question, question_terms, present, idf, rare)
                         if not translations(w, language) and w not in surfaces
                         and not set(tokenize(w)) <= phrased]
    else:
        surfaces = _unseen(question, question_terms, present, idf, rare)
        if is_known(language) and any(p != language and is_known(p) for p in languages):
            # ... unless a candidate of the other language says it: 密码 where the English policy says
            # "password" (its own Chinese units are judged below, and they may all be about something else)
            surfaces = _untranslated_only(question, language, surfaces, present, idf, rare)
    asked = asks if is_known(language) else stop_words(language).__contains__
    surfaces = [w for w in surfaces if not asked(w.lower()) and _a_word(w)
                and can_name_a_topic(w, language, question) and not _cut_across(question, w, sources)
                and not _setting_the_scene(question, w)]
    if not is_known(language):
        # Its word cosines were never calibrated (the German handbook's "Jobticket", "Weihnachtsgeld" and
        # "Betriebsrente" relate to its BahnCard and allowance rules above the bar): its words as they stand.
        return tuple(_topic_words(question, surfaces, present))
    if not surfaces or (across and (language, languages[units[0].unit.source]) not in MODEL_RELATES_ACROSS):
        return tuple(surfaces)
    if not matched and _key_share(question, tuple(surfaces), idf) >= TOPIC_SHARE:
        # What the question is about is words the knowledge base never uses, in either language: the model
        # relating them to its sentences is the domain's closeness, not an answer ("referral", "bonus" and
        # "hiring" .83-.85 to the contacts table). A single word of a longer question it relates to a
        # statute ("landlord" to 出租人, .13 of the key words) is still vetted.
        return tuple(surfaces)
    # ... and the model relates it to none of the best units ("landlord" to the statutes' 出租人) — of the
    # question's language when one of those is the best.
    best = (units if across else own)[:5]
    texts = [embedded_text(s, sources) for s in best]
    passages = [languages[s.unit.source] for s in best]
    related = same_language_threshold(MATCHED_RELATED if matched else RELATED_TERM, language, "sentence")
    rows = _mixed_rows(terms, surfaces, texts, language, passages)
    found = tuple(w for w, row in zip(surfaces, rows)
                  if max(comparable(c, language, p, "sentence") for c, p in zip(row, passages)) < related)
    if matched and _key_share(question, found, idf) < TOPIC_SHARE:
        return ()  # ... and the words it lacks are not what the question is about
    return found


def _said_little(question: str, language: str, own: list[ScoredUnit]) -> bool:
    """Whether the sentences of an English question's language, though one matches it well, may only match
    its setting: none holds more than `MATCHED_SAID` of its key words, and the closest writes none of its
    names. Its missing words are then a near miss when they hold `TOPIC_SHARE` of those key words."""
    return max(u.said for u in own) <= MATCHED_SAID and not _names_it(question, language, own)


def _names_it(question: str, language: str, units: list[ScoredUnit]) -> bool:
    """Whether the unit closest to the question writes one of its names: then it speaks of what the question
    asks about, and a word it lacks is more likely said otherwise ("Which Irish cities had large Huguenot
    enclaves?")."""
    best = max(units, key=lambda u: u.cosine)
    return bool(question_names(question, language) & set(tokenize(best.unit.matched_text)))


def _key_share(question: str, found: tuple[str, ...], idf: Idf) -> float:
    """The share of the IDF mass of the question's key words (not how it asks) that `found` holds."""
    keys = {t for t in tokenize(question) if is_key(t)}
    weights = idf(sorted(keys)) if keys else {}
    held = {t for word in found for t in tokenize(word)}
    return sum(w for t, w in weights.items() if t in held) / (sum(weights.values()) or 1.0)


def _untranslated_only(question: str, language: str, surfaces: list[str], present: set[str], idf: Idf,
                       rare: float) -> list[str]:
    """Of `surfaces`, the words no candidate holds in translation: a word (or the phrase it is part of)
    whose translations the candidates use is said in the other language."""
    known = _known_in(present, idf, rare, language)
    said = {t for word, found in senses(question, language)
            if found and not _untranslated(found, idf, known) for t in tokenize(word)}
    return [w for w in surfaces if not set(tokenize(w)) <= said]


def _topic_words(question: str, surfaces: list[str], present: set[str]) -> list[str]:
    """Of a question's unseen words in a language other than the known two (no stemmer of its own here),
    those it asks about: not another form of a word the passages use („Zahlt“ where they say „zahlen“,
    „Firma“ beside „Firmenlaptop“: the word less its last two letters, at least four, begins one of
    theirs), nor its opening word while others remain (the verb of „Bekomme ich ein Jobticket?“: a yes/no
    question opens with its verb, others with a question word; what it asks about comes later)."""
    def inflected(word: str) -> bool:
        stem = word.lower()[: max(4, len(word) - 2)]
        return len(word) > 4 and any(token.startswith(stem) for token in present)

    found = [w for w in surfaces if not inflected(w)]
    opening = next(iter(words(question)), "")
    rest = [w for w in found if w != opening]
    return rest or found


def _words_of(sources: list[Chunk]) -> set[str]:
    present: set[str] = set()
    for chunk in sources:
        present.update(tokenize(chunk.indexed_text))
    return present


def _absent_in_both(question: str, language: str, languages: list[str], sources: list[Chunk],
                    idf: Idf) -> tuple[str, ...]:
    """Where a sentence matches the rest of a Chinese question well: its words the dictionary knows as
    words, that the knowledge base never uses, in Chinese nor — where the candidates hold English too — in
    any English translation (签证 of "出差办签证的费用能报销吗？": the model relates it to the travel rules).
    Not for English questions: an English word's Chinese translations often miss the knowledge base's own
    word (cab → 出租汽车 where it says 出租车)."""
    if language != "zh" or "en" not in languages:
        return ()
    found = _missing_across(question, language, _words_of(sources), idf, idf([UNSEEN])[UNSEEN])
    return tuple(w for w in found if first_sense(w) and not asks(w)
                 and can_name_a_topic(w, language, question) and not _cut_across(question, w, sources))


def _unseen(question: str, question_terms: list[str], present: set[str], idf: Idf, rare: float) -> list[str]:
    """The question's words (as it spells them) that the knowledge base never uses: "daycare"."""
    candidates = [t for t in dict.fromkeys(question_terms)
                  if t not in present and not asks(t) and not _NUMBER.match(t) and len(t) >= 2]
    weights = idf(candidates) if candidates else {}
    unseen = [t for t in candidates if weights.get(t, 0.0) >= rare - 1e-9]
    return list(dict.fromkeys(_surface(question, t) for t in unseen))


def _spaced_words(question: str, language: str) -> bool:
    """Whether a question (in `language`) is written in Latin script, words apart — what the knowledge base's
    own words can be compared with as they stand (German, French, Spanish…; not Japanese or Korean)."""
    return script_language(question) == "en" and language not in ("ja", "ko")


def _a_word(word: str) -> bool:
    """Whether a word of the question can be a key term: a Chinese one only when jieba's or the bilingual
    dictionary knows it whole. The others are jieba's guesses at characters it knows no word for, not words
    the asker used (看牙能 of "看牙能报多少钱？", 能报, 假能, 留到: a near miss on each was false)."""
    return bool(without_cjk(word).strip()) or bool(word_frequency(word) or first_sense(word))


def _cut_across(question: str, word: str, sources: list[Chunk]) -> bool:
    """Whether jieba cut the Chinese `word` out of the question across a word the candidates use: a
    dictionary word that begins before it and ends inside it, or begins inside and ends after it, written in
    one of `sources`. "我刚入职能休年假吗？" is 刚入/职能 to jieba, though the asker wrote 入职 (as the leave rules
    do) and 能: no near miss on 职能 ("functions")."""
    if without_cjk(word).strip():
        return False
    spans = set()
    for found in re.finditer(re.escape(word), question):
        start, end = found.span()
        spans |= {question[a:b] for a in range(max(0, start - 3), start) for b in range(start + 1, end)}
        spans |= {question[a:b] for a in range(start + 1, end) for b in range(end + 1, end + 4)}
    words_there = {s for s in spans if not without_cjk(s).strip() and _a_word(s)}
    return any(span in chunk.text for span in words_there for chunk in sources)


def _mixed_rows(terms: TermSimilarity, words: list[str], texts: list[str], language: str,
                passages: list[str]) -> list[list[float]]:
    """Each word's cosine to each text; to a text in the other language measured partly against the word
    translated (rag.judging.scales.measured_across), as every cosine across that pair is."""
    rows = terms(words, texts)
    if not TRANSLATED_DENSE.get(language) or all(p == language for p in passages):
        return rows
    translated = terms([translation_for(w, language) or w for w in words], texts)
    return [[measured_across(c, t, language) if p != language and is_known(p) else c
             for c, t, p in zip(row, other, passages)]
            for row, other in zip(rows, translated)]


def _missing_across(question: str, language: str, present: set[str], idf: Idf, rare: float) -> list[str]:
    """Key words of the question — ones the knowledge base never uses — for which the bilingual dictionary
    knows translations, none of which the knowledge base uses either (a stem shared with a candidate
    passage counts: "probationary" is the guide's "probation")."""
    known = _known_in(present, idf, rare, language)
    out: list[str] = []
    for word, found in senses(question, language):
        if len(word) < (2 if language == "zh" else 3):
            continue  # a single Chinese character is too ambiguous to count
        tokens = [t for t in tokenize(word) if not asks(t)]
        weights = idf(tokens) if tokens else {}
        if not tokens:
            continue
        parts = word.split() if language != "zh" else []
        if any(known(t, weights.get(t, 0.0)) for t in tokens):
            # A phrase the knowledge base says in neither language ("overtime pay", 加班费) lacks those of its
            # words it never uses, when their own translations are absent too ("overtime").
            if parts and _untranslated(found, idf, known):
                out += [_surface(question, p) for p in parts
                        if not known(p, weights.get(p, 0.0)) and _untranslated(_chinese(p), idf, known)]
            continue
        if not _untranslated(found, idf, known):
            continue
        # A phrase of common words ("get money", "keep hold") is missing only when one of its words is too.
        if len(parts) > 1 and not any(_untranslated(_chinese(p), idf, known) for p in parts):
            continue
        out.append(word if language == "zh" else " ".join(_surface(question, t) for t in parts or [word]))
    return out


def _known_in(present: set[str], idf: Idf, rare: float, language: str) -> Callable[[str, float], bool]:
    """The test of whether the knowledge base uses a token (given its IDF weight): a candidate holds it or a
    stem of it ("probationary" is the guide's "probation"), or any passage does — or the word it is derived
    from ("probationari", the stemmer's, is "probation" less its suffix, which any passage may hold)."""
    stems = {t[:5] for t in present if len(t) >= 5}
    # What the passages name a kind of is mentioned: "capital" where they speak of 省会 ("provincial capital").
    kinds = {kind_of(t) for t in present if without_cjk(t) != t} if language == "en" else set()

    def known(token: str, weight: float) -> bool:
        return (token in present or weight < rare - 1e-9 or (len(token) >= 5 and token[:5] in stems)
                or token in kinds or _derived_known(token, idf, rare) or doer_of(token) in present)

    return known


def _derived_known(token: str, idf: Idf, rare: float) -> bool:
    """Whether a long English token, less a suffix of two or three letters, is a word any passage uses: the
    stemmer keeps "probationary" as probationari and "probation" as probat."""
    if len(token) < 8 or not token.isascii():
        return False
    bases = {t for end in (2, 3) for t in stem_words(token[:-end])}
    return bool(bases) and any(w < rare - 1e-9 for w in idf(sorted(bases)).values())


def _chinese(word: str) -> tuple[str, ...]:
    """The Chinese words the dictionary gives for an English word."""
    return tuple(w for _, found in chinese_for(word) for w in found)


def _unaccented(sense: str) -> str:
    """A dictionary sense without the accents of its Latin letters: the dictionary writes "résumé", a
    handbook "resume"."""
    return "".join(c for c in unicodedata.normalize("NFKD", sense) if not unicodedata.combining(c))


def _untranslated(found: tuple[str, ...], idf: Idf, known: Callable[[str, float], bool]) -> bool:
    """Whether the knowledge base uses none of a word's translations `found` (False when there are none:
    a function word, "those", "other", leaves nothing to look for). A verb that means little on its own and
    its object are known by the object too: 出国 "go abroad" where the travel rules say "trips abroad", 生病
    "fall ill" where the leave policy says "if you are ill"."""
    objects = (light_verbs_object(sense) for sense in found)
    translated = [t for t in (tokenize(_unaccented(sense)) for sense in (*found, *filter(None, objects))) if t]
    if not translated:
        return False
    weights = idf(sorted({t for sense in translated for t in sense}))
    return not any(_known_share(sense, weights, known) > 0.5 for sense in translated)


def _known_share(sense: list[str], weights: dict[str, float], known: Callable[[str, float], bool]) -> float:
    """The share of a translation's IDF mass the knowledge base knows ("USB flash drive" for a guide on
    "USB storage devices": .61; "year-end bonus" where only "year" and "end" occur: .49)."""
    total = sum(weights.get(t, 0.0) for t in sense) or 1.0
    return sum(weights.get(t, 0.0) for t in sense if known(t, weights.get(t, 0.0))) / total


def _surface(question: str, token: str) -> str:
    """The question's own word for a (lower-cased, stemmed, sub-word) token: "daycare" for "daycar",
    公积金 for 积金."""
    for word in words(question):
        if tokenize(word) == [token] or (len(word) > len(token) and token in word.lower()):
            return word
    return token


def question_names(question: str, language: str) -> set[str]:
    """The tokens of the question's names, numbers and codes."""
    # In another language than the known two, a capital says little (German nouns): its codes and numbers.
    # ... and "I'm", "I've" are no names either (tokenize keeps a contraction whole).
    if not is_known(language):
        return {t for c in codes_in(question) for t in tokenize(c)}
    named = (t for m in _NAME.finditer(question.strip()) for t in tokenize(m.group(0)))
    return {t for t in named if not function_word(t)}
