"""Sentence-level evidence for a question: the quotable units of the top passages, scored by meaning.

Computed once per question on the embedded default and used twice: by the evidence gate (how well the
best sentence matches is a stronger answerability signal than the best passage) and by the extractive
answer (which sentences to quote). Every unit of the best passages is a candidate, whatever words it
shares with the question ("住酒店" is answered by a sentence on 住宿, a Chinese question by an English
passage): the embedded model's cosine decides, shared rare words only break near-ties. Cosines across
languages sit lower than within one, so each is first put on its passage language's scale
(rag.scales, calibrated on real questions of both languages). Also found here: the question's key terms that no
candidate mentions, in any words the model relates to them — a near miss ("dog" when the handbook
speaks only of the office). Across languages a unit is credited for how much closer it is to this question
than to questions in general in the asker's language (some are close to every one of them).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from itertools import chain

from rag.answer_kind import kind_first
from rag.bilingual import chinese_for, first_sense, kind_of, senses, translations
from rag.languages import codes_in, detect_language, is_known, passage_language, script_language, stop_words
from rag.lexical import UNSEEN, Idf, function_word, stem_words, tokenize, without_cjk, word_frequency, words
from rag.negation import asks_what_is_not, denial_first
from rag.quotable import ARTICLE, Unit, quotable_units
from rag.scales import (
    TRANSLATED_DENSE,
    comparable,
    measured_across,
    on_passage_scale,
    same_language_threshold,
    translation_for,
)
from rag.sections import NUMBERING, named_section
from rag.synonyms import asks, light_verbs_object, synonyms
from rag.types import Chunk

Similarity = Callable[[list[str]], list[float]]  # cosine of each text to the question
# (terms, texts) -> cosine of each term (embedded as a query) to each text: one row per term
TermSimilarity = Callable[[list[str], list[str]], list[list[float]]]

# Weight of the (normalised) lexical score beside the cosine: meaning decides, shared rare words and the
# passage's retrieval rank break near-ties (squad2: 0.885 quotes holding the answer without, 0.905 with).
LEXICAL_WEIGHT = 0.03
# A key term is related to a candidate when its cosine to one of the best units reaches this (same
# language: 酒店 ↔ a sentence on 住宿 0.86, dog ↔ the onboarding paragraph 0.79).
RELATED_TERM = 0.82
# ... and a near miss only when no sentence matches the question well: a paraphrase the model cannot
# relate word by word ("husband" for "married") comes with a sentence that matches as a whole (squad2:
# notes on 11.7 % of answerable questions without this bound, 0.8 % with it). On the scale of the
# question's language (set on English's; rag.scales).
NEAR_MISS_BELOW = 0.84
# ... unless the words no candidate mentions are what the question is about, and the sentences match only
# its setting: "Do I get stock options?", "Can I get a bonus at the end of the year?" match the benefits
# and leave rules at .84-.86, while "To where did Ethelred flee?" matches the sentence that names Ethelred.
# Then a word is a near miss when the model relates it to no best unit at this cosine (in a domain the
# sentences are close to most of its words: "bonus" .835, "bank" .838 against the handbook's), the missing
# words hold this share of the question's key words, no sentence of its language holds more than
# MATCHED_SAID of them, and the closest writes none of its names (English; squad2's answerable questions:
# notes on 6 → 10 of 1,278, BENCHMARKS.md).
MATCHED_RELATED = 0.84
TOPIC_SHARE = 0.35
MATCHED_SAID = 0.28
# ... and of the share of the question's words an other-language unit holds translated (rag.bilingual):
# across languages the model's cosines sit close together, and the dictionary is exact where it knows a
# word (squad2-zh answers holding the gold .684 -> .789 at 0.05; 0.03: .763, 0.1: .763, 0.2: .658).
TRANSLATED_WEIGHT = 0.05
# A token this long or longer that begins another is its stem ("probat" of "probationari"); shorter ones
# begin too many unrelated words ("part" of "parti", party; "art" of "articl")
DERIVED_STEM = 6
# Language pairs where the model's relatedness also vets a word the dictionary finds missing: en -> zh (on
# lawref-en it dropped 5 of 7 false warnings: "landlord" for the statutes' 出租人); not zh -> en, where it
# relates every Chinese word to the English policies (年终奖, 丧假, 加班费 were no longer caught).
MODEL_RELATES_ACROSS = {("en", "zh")}
# A table row holding more of the question's words than the best unit, itself a row of that table, leads
# when it scores this close (the runner-ups' margin, rag.extractive).
ROW_MARGIN = 0.08
BUDGET = 16  # units scored by meaning per question (their vectors are cached)
JOINED_UNITS = 4  # ... and of each other-language passage joined to them (rag.pools), in reading order
# Across languages some units are close to every question in the asker's language (an English sentence
# naming a Chinese document, a list of holidays): what counts is how much closer a unit is to this question
# than to questions in general. Each other-language unit loses this share of its closeness to the
# questions below beyond the mean of those units (answers holding the gold: handbook across languages
# .143 -> .429, squad2-zh .605 -> .684; BENCHMARKS.md). The same questions in each language the answer
# frame is written in (rag.languages.TEXTS): handbook-other .778 -> .889, squad2-other .702 -> .693.
GENERAL_WEIGHT = 0.6
GENERAL_QUESTIONS = {
    "zh": ("这是什么？", "怎么办？", "有多少？", "什么时候？", "谁负责？", "为什么会这样？", "在哪里？",
           "需要多长时间？", "可以吗？", "是谁发明的？", "这是哪一年发生的？", "他叫什么名字？"),
    "en": ("What is this?", "What should I do?", "How many?", "When?", "Who is responsible?",
           "Why does this happen?", "Where is it?", "How long does it take?", "Is that allowed?",
           "Who invented it?", "In which year did it happen?", "What is his name?"),
    "de": ("Was ist das?", "Was soll ich tun?", "Wie viele?", "Wann?", "Wer ist zuständig?", "Warum passiert das?",
           "Wo ist es?", "Wie lange dauert es?", "Ist das erlaubt?", "Wer hat es erfunden?",
           "In welchem Jahr ist es passiert?", "Wie heißt er?"),
    "fr": ("Qu'est-ce que c'est ?", "Que dois-je faire ?", "Combien ?", "Quand ?", "Qui est responsable ?",
           "Pourquoi cela arrive-t-il ?", "Où est-ce ?", "Combien de temps cela prend-il ?", "Est-ce autorisé ?",
           "Qui l'a inventé ?", "En quelle année cela s'est-il passé ?", "Comment s'appelle-t-il ?"),
    "es": ("¿Qué es esto?", "¿Qué debo hacer?", "¿Cuántos?", "¿Cuándo?", "¿Quién es el responsable?",
           "¿Por qué pasa esto?", "¿Dónde está?", "¿Cuánto tiempo tarda?", "¿Está permitido?", "¿Quién lo inventó?",
           "¿En qué año ocurrió?", "¿Cómo se llama?"),
    "pt": ("O que é isto?", "O que devo fazer?", "Quantos?", "Quando?", "Quem é o responsável?",
           "Porque é que isto acontece?", "Onde fica?", "Quanto tempo demora?", "Isso é permitido?",
           "Quem o inventou?", "Em que ano aconteceu?", "Como se chama ele?"),
    "it": ("Che cos'è?", "Che cosa devo fare?", "Quanti?", "Quando?", "Chi è il responsabile?", "Perché succede?",
           "Dov'è?", "Quanto tempo ci vuole?", "È consentito?", "Chi l'ha inventato?", "In che anno è successo?",
           "Come si chiama?"),
    "ja": ("これは何ですか？", "どうすればいいですか？", "いくつですか？", "いつですか？", "担当は誰ですか？",
           "なぜこうなるのですか？", "どこにありますか？", "どのくらい時間がかかりますか？", "それは許可されていますか？",
           "誰が発明しましたか？", "それは何年に起きましたか？", "彼の名前は何ですか？"),
    "ko": ("이것은 무엇입니까?", "어떻게 해야 하나요?", "몇 개인가요?", "언제인가요?", "담당자는 누구인가요?",
           "왜 이런 일이 일어나나요?", "어디에 있나요?", "얼마나 걸리나요?", "허용되나요?", "누가 발명했나요?",
           "몇 년에 일어났나요?", "그의 이름은 무엇인가요?"),
}
_NAME = re.compile(r"(?<!^)(?<![.?!]\s)\b([A-Z][\w'’.-]*|\d[\d,.]*)|(\d[\d,.]*)")
_NUMBER = re.compile(r"^[\d.,]+$")


@dataclass
class ScoredUnit:
    unit: Unit
    lexical: float  # IDF mass of the question's words it or its section's heading (if named) contains
    coverage: float  # ... as a share of the question's IDF mass
    cosine: float = 0.0  # on the question language's scale (rag.scales), so units of both languages compare
    raw: float = 0.0  # as the model measured it
    score: float = 0.0
    translated: float = 0.0  # in another language than the question: share of the question's words it holds translated
    prior: float = 1.0  # its passage's rank as a weight on its word scores (lexical has it already)
    general: float = 0.0  # what its closeness to questions in general took off its cosine (across languages)
    # The share of the IDF mass of the question's key words it holds: not how the question asks (公司, 员工),
    # nor single Chinese characters (丢 of 发票丢了)
    said: float = 0.0
    # ... held by it with its passage's title and headings, translated where it is in the dictionary's other
    # language than the question's (rag.bilingual): what a reader sees the unit is about
    said_under: float = 0.0

    @property
    def words(self) -> float:
        """How much of the question's words it holds, as they are or translated (by its passage's rank)."""
        return self.lexical + self.prior * self.translated


@dataclass
class Evidence:
    units: list[ScoredUnit]  # the shortlisted units, best first
    all_units: list[Unit] = field(default_factory=list)  # every unit of the passages (for continuations)
    signals: dict[str, float] = field(default_factory=dict)
    missing: tuple[str, ...] = ()  # the question's key terms no candidate mentions (a near miss)
    languages: list[str] = field(default_factory=list)  # of each passage
    sections: list[tuple[str, str]] = field(default_factory=list)  # (file, title and headings) of each passage
    language: str = ""  # of the passage holding the best-matching unit: whose gate model reads `signals`
    # The same signals, of the units of each other language (the gate reads them with that language's model)
    others: dict[str, dict[str, float]] = field(default_factory=dict)
    # The question asks what is not so, and no sentence as close as the best one says anything is not: quoted,
    # the best one would answer the opposite (rag.negation)
    opposite: bool = False
    starts: list[int] = field(default_factory=list)  # where each passage begins in its document
    # The question's names and numbers (tokens), each with the tokens it is written as in either language
    names: dict[str, frozenset[str]] = field(default_factory=dict)

    def led_by(self, language: str) -> Evidence:
        """This evidence with the units of `language` first (quoted first when its evidence decided)."""
        first = [u for u in self.units if self.languages[u.unit.source] == language]
        rest = [u for u in self.units if self.languages[u.unit.source] != language]
        return replace(self, units=first + rest, language=language)

    @property
    def best(self) -> ScoredUnit | None:
        return self.units[0] if self.units else None


def gather_evidence(
    question: str,
    sources: list[Chunk],
    idf: Idf,
    similarity: Similarity | None = None,
    *,
    query: str | None = None,
    budget: int = BUDGET,
    terms: TermSimilarity | None = None,
    joined: int = 0,
    translated: Similarity | None = None,
) -> Evidence:
    """Score the quotable units of `sources` (best first) against the question (and its rewrite). The
    last `joined` sources are the other language's best passages joined to the top ones (rag.pools): the
    first `JOINED_UNITS` units of each are scored beside the top passages' shortlist."""
    question_terms = tokenize(question)
    # The knowledge base's own words for the question's words it never uses weigh as the question's ("bike":
    # the guide's "bicycle"), each by its own rarity.
    found_for = synonyms(question, idf)
    extra = [t for found in found_for.values() for t in found]
    weights = idf(sorted(set(question_terms + extra + (tokenize(query) if query else []))))
    total = sum(weights.values()) or 1.0
    keys = {t: w for t, w in weights.items() if not asks(t) and (len(t) > 1 or t.isascii())}
    key_total = sum(keys.values()) or 1.0
    language = detect_language(question)
    languages = [passage_language(c) for c in sources]
    first = len(sources) - joined  # the top passages; then the joined ones
    units: list[Unit] = []
    for n, chunk in enumerate(sources):
        units.extend(quotable_units(chunk, n, len(units)))
    # A sentence under a heading the question names says what the heading says ("Your first day": "Arrive at
    # 9:30 at the reception desk"), beside a sentence elsewhere that repeats the words ("first five days").
    asked = set(weights)
    headings = [named_section(asked, chunk.heading_path) for chunk in sources]

    # A passage's rank among those of its language: the other language's passages say nothing of how well
    # retrieval found this language's (in a knowledge base of one language, its rank).
    ranks = [languages[:n].count(lang) for n, lang in enumerate(languages)]
    across = any(p != language for p in languages)  # then the question's words are translated for them
    groups = _translated_groups(question, language, idf) if across else []
    translated_total = sum(max(g.values(), default=0.0) for g in groups) or 1.0
    seen: set[str] = set()
    candidates: list[ScoredUnit] = []
    held: dict[int, list[str]] = {}  # the words of each candidate (by id), for what its headings add
    for unit in units:
        key = " ".join(unit.matched_text.split()).lower()
        if key in seen:  # neighbouring chunks overlap: the same sentence twice is one candidate
            continue
        seen.add(key)
        tokens = tokenize(ARTICLE.sub("", unit.matched_text))
        unit_words = set(tokens)
        mass = sum(w for t, w in weights.items() if t in unit_words)
        headed = sum(weights[t] for t in headings[unit.source] - unit_words)
        prior = 1.0 / (1.0 + 0.35 * ranks[unit.source])
        scored = ScoredUnit(unit, (mass + headed) * prior, mass / total, prior=prior,
                            said=sum(w for t, w in keys.items() if t in unit_words) / key_total)
        held[id(scored)] = tokens
        if groups and languages[unit.source] != language and is_known(languages[unit.source]):
            found = sum(max((w for t, w in g.items() if t in unit_words), default=0.0) for g in groups)
            scored.translated = found / translated_total
        candidates.append(scored)
    if similarity is None:  # no model to judge meaning: only shared words can say a unit is relevant
        chosen = sorted((c for c in candidates if c.lexical > 0), key=lambda s: -s.lexical)[:10]
    else:
        # Across languages the passages' order says less (a Chinese question's English passages rank close
        # together): half the budget goes to the units holding the most of the question's words, translated.
        across_only = all(p != language for p in languages[:first])
        chosen = _shortlist([c for c in candidates if c.unit.source < first], budget, 2 if across_only else 4)
        chosen += _first_units([c for c in candidates if c.unit.source >= first], JOINED_UNITS)
    _score(chosen, sources, similarity, language, languages, translated, total)
    _said_under(question, language, chosen, sources, languages, keys, key_total, held)
    # The near miss is judged on the top passages alone, as in a knowledge base of one language.
    # ... and a word is no near miss when the best sentence in the question's language (the language of the
    # synonyms) holds one of them: "per diem" where the travel policy says "daily meal allowance"
    own_best = next((c for c in chosen if languages[c.unit.source] == language), None)
    best_words = set(tokenize(own_best.unit.matched_text)) if found_for and own_best is not None else set()
    # (the question is put in its own words when that sentence, or its headings, holds one: "Booking leave")
    headed = set(tokenize(sources[own_best.unit.source].context)) if best_words else set()
    paraphrased = any(t in best_words | headed for found in found_for.values() for t in found)
    missing = _missing_terms(question, language, question_terms, sources[:first], languages,
                             [c for c in chosen if c.unit.source < first], idf, terms, paraphrased)
    missing = tuple(m for m in missing if not any(t in best_words for t in found_for.get(m, ())))
    evidence = Evidence(chosen, units, {}, missing, languages, [(c.file, c.context) for c in sources],
                        starts=[c.start for c in sources], names=_names_written(question, language))
    # The gate reads the language of the unit that will be quoted first, and that language's best cosine.
    quoted = languages[chosen[0].unit.source] if chosen else language
    top = max((u for u in chosen if languages[u.unit.source] == quoted), key=lambda u: u.cosine, default=None)
    evidence.language = quoted
    sentence = on_passage_scale(top.raw, language, evidence.language, "sentence") if top else 0.0
    evidence.signals = _signals(question, language, sentence, chosen, sources, missing, weights, total,
                                found_for)
    # The share of the question's words a unit in the other language holds, translated (its best).
    evidence.signals["translated"] = round(max((c.translated for c in chosen), default=0.0), 4)
    # Which sentence answers best across languages; the gate and the near-miss check read the cosines as
    # calibrated, above.
    _less_general(chosen, sources, language, languages, terms)
    # A second language's evidence, for the gate: its best unit by how much closer it is to this question than
    # to questions in general (an English sentence naming a Chinese policy is close to every Chinese one).
    for other in sorted({languages[c.unit.source] for c in chosen} - {quoted}):
        own = [c for c in chosen if languages[c.unit.source] == other]
        best = max(own, key=lambda u: u.cosine)
        cosine = on_passage_scale(best.raw - best.general, language, other, "sentence")
        said = _signals(question, language, cosine, own, sources, missing, weights, total, found_for)
        evidence.others[other] = said | {"translated": round(max(c.translated for c in own), 4)}
    led = denial_first(question, language, evidence.units, lambda s: s.unit.matched_text,
                       lambda s: languages[s.unit.source], lambda s: s.score)
    evidence.opposite = led is None
    evidence.units = led or evidence.units
    if not asks_what_is_not(question, language):  # (else the sentence that denies leads, as it is)
        evidence.units = kind_first(question, language, evidence.units, lambda s: s.unit.matched_text,
                                    lambda s: languages[s.unit.source], lambda s: s.score)
    evidence.units = _named_row_first(evidence.units, sources)
    return evidence


def _named_row_first(units: list[ScoredUnit], sources: list[Chunk]) -> list[ScoredUnit]:
    """`units` led by the row of the best unit's table that holds the most of the question's words, when
    the best unit is a table row and that row scores within `ROW_MARGIN` of it. A table's rows read alike
    to the model — the same columns, one cell apart — and a question picks a row by its cells: "Is
    Christmas a holiday in Shanghai?" is the Christmas row (Lisbon only), not the National Day one that
    names Shanghai (cosine .877 against the Christmas row's .813)."""
    best = units[0] if units else None
    if best is None or best.unit.kind != "row":
        return units
    table = sources[best.unit.source].file
    rows = [u for u in units if u.unit.kind == "row" and sources[u.unit.source].file == table
            and u.score >= best.score - ROW_MARGIN]
    named = max(rows, key=lambda u: u.words)
    if named.words <= best.words:
        return units
    return [named] + [u for u in units if u is not named]


def _shortlist(candidates: list[ScoredUnit], budget: int, share: int = 4) -> list[ScoredUnit]:
    """Up to `budget` units: those of the best passages in reading order, and 1/`share` of the budget kept
    for the units of later passages that share the most rare words with the question (squad2-zh answers
    holding the gold .868 -> .895 and lawref-en .231 -> .308 with half of it across languages)."""
    by_words = sorted((c for c in candidates if c.words > 0), key=lambda s: -s.words)
    chosen: dict[int, ScoredUnit] = {}
    # The best passages' units first; then the rarest-word ones; a short passage list leaves room for the rest.
    for c in chain(candidates[: budget - budget // share], by_words, candidates):
        if len(chosen) >= budget:
            break
        chosen.setdefault(id(c), c)
    return list(chosen.values())


def _first_units(candidates: list[ScoredUnit], per_source: int) -> list[ScoredUnit]:
    """The first `per_source` units of each passage, in reading order."""
    taken: dict[int, int] = {}
    out = []
    for c in candidates:
        if taken.get(c.unit.source, 0) < per_source:
            taken[c.unit.source] = taken.get(c.unit.source, 0) + 1
            out.append(c)
    return out


def _said_under(question: str, language: str, units: list[ScoredUnit], sources: list[Chunk],
                languages: list[str], keys: dict[str, float], key_total: float,
                words_of: dict[int, list[str]]) -> None:
    """Each unit's `said_under`: a key word counts as said when the unit (`words_of` it, by id), its title or
    a heading holds it — in the dictionary's other language, one of its senses, a phrase word for word
    ("first day" for 第一天: not "first salary … two days a week")."""
    said_as: dict[str, list[tuple[str, ...]]] = {t: [] for t in keys}
    if any(p != language for p in languages):
        for word, found in senses(question, language):
            meanings = [tuple(tokenize(sense)) for sense in found]
            for token in tokenize(word):
                if token in said_as:
                    said_as[token] += [m for m in meanings if m]
    headed: dict[int, list[list[str]]] = {}  # each passage's title and headings, as tokens
    for scored in units:
        n = scored.unit.source
        if n not in headed:
            parts = (sources[n].title, *sources[n].heading_path)
            headed[n] = [tokenize(NUMBERING.sub("", part)) for part in parts]
        lines = [*headed[n], words_of[id(scored)]]
        held = {t for line in lines for t in line}
        other = languages[n] != language and is_known(languages[n])
        scored.said_under = sum(w for t, w in keys.items() if t in held or (
            other and any(_phrase_in(m, lines) for m in said_as[t]))) / key_total


def _phrase_in(phrase: tuple[str, ...], lines: list[list[str]]) -> bool:
    """Whether the tokens of `phrase` follow one another in one of `lines`, each as it is or as a word derived
    from the same stem (`_derived`)."""
    size = len(phrase)
    return any(all(_derived(a, b) for a, b in zip(phrase, line[i:i + size]))
               for line in lines for i in range(len(line) - size + 1))


def _derived(one: str, other: str) -> bool:
    """Whether two tokens are one word, or one is the other's stem with a suffix the stemmer keeps:
    "probationary period" (probationari) is the guide's "probation period" (probat)."""
    short, long = sorted((one, other), key=len)
    return one == other or (len(short) >= DERIVED_STEM and long.startswith(short) and short.isascii())


def _translated_groups(question: str, language: str, idf: Idf) -> list[dict[str, float]]:
    """Each word of the question that the bilingual dictionary translates, as the IDF of each of its
    translations' tokens: a unit in the other language is credited, per word, for its rarest one present."""
    # A name or code stands for itself (found, not translated): the shared-word score counts it already.
    groups = [set(tokenize(" ".join(found))) for word, found in translations(question, language)
              if found != (word,)]
    groups = [g for g in groups if g]
    weights = idf(sorted(set().union(*groups))) if groups else {}
    return [{t: weights.get(t, 0.0) for t in g} for g in groups]


def _score(units: list[ScoredUnit], sources: list[Chunk], similarity: Similarity | None, language: str,
           languages: list[str], translated: Similarity | None = None, total: float = 1.0) -> None:
    top = max((s.lexical for s in units), default=0.0) or 1.0
    # Across the known pair a unit in the other language shares only names and codes with the question (its
    # words count translated): its shared words weigh by their share of the question's, not of the best
    # match's — "VPN" alone is not the whole word bonus for "VPN 密码多久换一次". A question in another
    # language shares cognates as written, its only word signal: there as in one language.
    top_across = max(top, total) if is_known(language) else top
    # Embedded with the passage's title and headings, as passages are indexed: "26 working days" under
    # "Annual leave entitlement" is the entitlement, under "Long service days" an extra.
    texts = [_embedded_text(s, sources) for s in units]
    cosines = similarity(texts) if similarity and units else [0.0] * len(units)
    # The question translated word for word reads only units of the dictionary's other language.
    other = [n for n, s in enumerate(units) if languages[s.unit.source] != language
             and is_known(languages[s.unit.source])]
    if translated is not None and other and similarity:
        against = translated([texts[n] for n in other])
        cosines = list(cosines)
        for n, cosine in zip(other, against):
            cosines[n] = measured_across(cosines[n], cosine, language)
    for scored, cosine in zip(units, cosines):
        scored.raw = float(cosine) if similarity else 0.0
        scored.cosine = comparable(scored.raw, language, languages[scored.unit.source], "sentence")
        own = languages[scored.unit.source] == language
        scored.score = (scored.cosine + LEXICAL_WEIGHT * scored.lexical / (top if own else top_across)
                        + TRANSLATED_WEIGHT * scored.prior * scored.translated)
    units.sort(key=lambda s: -s.score)


def _less_general(units: list[ScoredUnit], sources: list[Chunk], language: str, languages: list[str],
                  terms: TermSimilarity | None) -> None:
    """Other-language units ranked by how much closer they are to the question than to questions in
    general in its language (`GENERAL_QUESTIONS`); centred on their mean, so their standing against the
    question language's units is unchanged."""
    other = [s for s in units if languages[s.unit.source] != language]
    if terms is None or len(other) < 2 or language not in GENERAL_QUESTIONS:
        return
    rows = terms(list(GENERAL_QUESTIONS[language]), [_embedded_text(s, sources) for s in other])
    closeness = [sum(column) / len(column) for column in zip(*rows)]
    centre = sum(closeness) / len(closeness)
    for scored, general in zip(other, closeness):
        scored.general = GENERAL_WEIGHT * (general - centre)
        scored.cosine -= scored.general
        scored.score -= scored.general
    units.sort(key=lambda s: -s.score)


def _embedded_text(scored: ScoredUnit, sources: list[Chunk]) -> str:
    """A unit as it is embedded: with its passage's title and headings, as passages are indexed."""
    return f"{sources[scored.unit.source].context}\n{scored.unit.matched_text}"


def _missing_terms(question: str, language: str, question_terms: list[str], sources: list[Chunk],
                   languages: list[str], units: list[ScoredUnit], idf: Idf,
                   terms: TermSimilarity | None, paraphrased: bool = False) -> tuple[str, ...]:
    """Key terms of the question (in `language`) — words the knowledge base never uses — that no
    candidate passage mentions and that the embedded model does not relate to any of the best units. Where a
    sentence matches the question well, only when they are its topic (`_topic_missing`) and it is not
    `paraphrased` (the best sentence holds the knowledge base's own word for one of its words: "leave" for
    "vacation", where "Can my manager refuse my vacation request?" lacks "refuse").
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
        return _absent_in_both(question, language, languages, sources, idf)
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
    surfaces = [w for w in surfaces
                if not asked(w.lower()) and _a_word(w) and not _cut_across(question, w, sources)]
    if not is_known(language):
        # Its word cosines were never calibrated (the German handbook's "Jobticket", "Weihnachtsgeld" and
        # "Betriebsrente" relate to its BahnCard and allowance rules above the bar): its words as they stand.
        return tuple(_topic_words(question, surfaces, present))
    if not surfaces or (across and (language, languages[units[0].unit.source]) not in MODEL_RELATES_ACROSS):
        return tuple(surfaces)
    # ... and the model relates it to none of the best units ("landlord" to the statutes' 出租人) — of the
    # question's language when one of those is the best.
    best = (units if across else own)[:5]
    texts = [_embedded_text(s, sources) for s in best]
    passages = [languages[s.unit.source] for s in best]
    related = same_language_threshold(MATCHED_RELATED if matched else RELATED_TERM, language, "sentence")
    rows = _mixed_rows(terms, surfaces, texts, language, passages)
    found = tuple(w for w, row in zip(surfaces, rows)
                  if max(comparable(c, language, p, "sentence") for c, p in zip(row, passages)) < related)
    if matched and (paraphrased or not _topic_missing(question, language, found, own, idf)):
        return ()  # a sentence matches the question well, and says what it is about
    return found


def _topic_missing(question: str, language: str, found: tuple[str, ...], own: list[ScoredUnit],
                   idf: Idf) -> bool:
    """Whether the words `found` missing are what an English question is about, though a sentence of its
    language matches it well: they hold `TOPIC_SHARE` of its key words, no sentence holds more than
    `MATCHED_SAID` of them, and the closest one writes none of its names."""
    return (language == "en" and _key_share(question, found, idf) >= TOPIC_SHARE
            and max(u.said for u in own) <= MATCHED_SAID and not _names_it(question, language, own))


def _names_it(question: str, language: str, units: list[ScoredUnit]) -> bool:
    """Whether the unit closest to the question writes one of its names: then it speaks of what the question
    asks about, and a word it lacks is more likely said otherwise ("Which Irish cities had large Huguenot
    enclaves?")."""
    best = max(units, key=lambda u: u.cosine)
    return bool(_question_names(question, language) & set(tokenize(best.unit.matched_text)))


def _key_share(question: str, found: tuple[str, ...], idf: Idf) -> float:
    """The share of the IDF mass of the question's key words (not how it asks) that `found` holds."""
    keys = {t for t in tokenize(question) if not asks(t) and (len(t) > 1 or t.isascii())}
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
    return tuple(w for w in found if first_sense(w) and not asks(w) and not _cut_across(question, w, sources))


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
    translated (rag.scales.measured_across), as every cosine across that pair is."""
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
        if not tokens or any(known(t, weights.get(t, 0.0)) for t in tokens):
            continue
        if not _untranslated(found, idf, known):
            continue
        # A phrase of common words ("get money", "keep hold") is missing only when one of its words is too.
        parts = word.split() if language != "zh" else []
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
                or token in kinds or _derived_known(token, idf, rare))

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


def _untranslated(found: tuple[str, ...], idf: Idf, known: Callable[[str, float], bool]) -> bool:
    """Whether the knowledge base uses none of a word's translations `found` (False when there are none:
    a function word, "those", "other", leaves nothing to look for). A verb that means little on its own and
    its object are known by the object too: 出国 "go abroad" where the travel rules say "trips abroad", 生病
    "fall ill" where the leave policy says "if you are ill"."""
    objects = (light_verbs_object(sense) for sense in found)
    translated = [t for t in (tokenize(sense) for sense in (*found, *filter(None, objects))) if t]
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


def _question_names(question: str, language: str) -> set[str]:
    """The tokens of the question's names, numbers and codes."""
    # In another language than the known two, a capital says little (German nouns): its codes and numbers.
    # ... and "I'm", "I've" are no names either (tokenize keeps a contraction whole).
    if not is_known(language):
        return {t for c in codes_in(question) for t in tokenize(c)}
    named = (t for m in _NAME.finditer(question.strip()) for t in tokenize(m.group(0)))
    return {t for t in named if not function_word(t)}


def _names_written(question: str, language: str) -> dict[str, frozenset[str]]:
    """Each name of the question (its token) with the tokens it is written as in either language: itself and
    the dictionary's translations ("shanghai": 上海, 上海市…)."""
    names = _question_names(question, language)
    out = {t: {t} for t in names}
    for phrase, found in translations(question, language) if is_known(language) else ():
        for token in tokenize(phrase):
            if token in out:
                out[token] |= {w for f in found for w in tokenize(f)}
    return {t: frozenset(forms) for t, forms in out.items()}


def _signals(question: str, language: str, sentence: float, units: list[ScoredUnit], sources: list[Chunk],
             missing: tuple[str, ...], weights: dict[str, float], total: float,
             found_for: dict[str, tuple[str, ...]] | None = None) -> dict[str, float]:
    """Answerability signals of the sentence level (the passage-level ones are the gate's own) of `question`,
    in `language`; `sentence` is the best unit's cosine on its passage language's scale. A name the best
    passage holds in the knowledge base's own words (`found_for`: "NYC" as "New York") is no missing name."""
    names = _question_names(question, language)
    best_passage = set(tokenize(sources[0].indexed_text)) if sources else set()
    said_as = {t: found for word, found in (found_for or {}).items() for t in tokenize(word)}
    best_passage |= {t for t in names if set(said_as.get(t, ())) & best_passage}
    missing_tokens = {t for word in missing for t in tokenize(word)}
    return {
        "sentence": round(sentence, 4),
        "sentence_coverage": round(max((s.coverage for s in units), default=0.0), 4),
        "missing_names": round(sum(1 for t in names if t not in best_passage) / len(names), 4) if names else 0.0,
        "missing_terms": round(sum(w for t, w in weights.items() if t in missing_tokens) / total, 4),
    }
