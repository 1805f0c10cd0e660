"""Sentence-level evidence for a question: the quotable units of the top passages, scored by meaning.

Computed once per question on the embedded default and used twice: by the evidence gate (how well the
best sentence matches is a stronger answerability signal than the best passage) and by the extractive
answer (which sentences to quote). Every unit of the best passages is a candidate, whatever words it
shares with the question ("住酒店" is answered by a sentence on 住宿, a Chinese question by an English
passage): the embedded model's cosine decides, shared rare words only break near-ties. Cosines across
languages sit lower than within one, so each is first put on its passage language's scale
(rag.judging.scales, calibrated on real questions of both languages). Also gathered here: the question's key terms
that no candidate mentions, in any words the model relates to them — a near miss (rag.judging.near_miss). Across
languages a unit is credited for how much closer it is to this question than to questions in general in the
asker's language (some are close to every one of them).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from itertools import chain
from typing import TYPE_CHECKING

from rag.judging.analysis import QuestionAnalysis, analyse
from rag.judging import calibration
from rag.judging.answer_kind import kind_first
from rag.words.bilingual import GLOSSED_LANGUAGE, english_for, senses, translations
from rag.words.languages import is_known, passage_language
from rag.words.lexical import Idf, tokenize
from rag.judging.near_miss import TermSimilarity, embedded_text, missing_terms
from rag.judging.negation import AS_CLOSE, denial_first
from rag.judging.quotable import ARTICLE, Unit, quotable_units
from rag.judging.scales import comparable, measured_across, on_passage_scale
from rag.judging.sections import NUMBERING, named_section
from rag.types import Chunk

if TYPE_CHECKING:
    from rag.judging.parts import AnsweredPart

Similarity = Callable[[list[str]], list[float]]  # cosine of each text to the question

# The weights and margins below are in rag/judging/calibration.json (`evidence`), with what each was measured on.
_FITTED = calibration.default().evidence
# Weight of the (normalised) lexical score beside the cosine: meaning decides, shared rare words and the
# passage's retrieval rank break near-ties (squad2: 0.885 quotes holding the answer without, 0.905 with).
LEXICAL_WEIGHT = _FITTED.lexical_weight
# Weight of the share of the question's words an other-language unit holds translated (rag.words.bilingual):
# across languages the model's cosines sit close together, and the dictionary is exact where it knows a
# word (squad2-zh answers holding the gold .684 -> .789 at 0.05; 0.03: .763, 0.1: .763, 0.2: .658).
TRANSLATED_WEIGHT = _FITTED.translated_weight
# A token this long or longer that begins another is its stem ("probat" of "probationari"); shorter ones
# begin too many unrelated words ("part" of "parti", party; "art" of "articl")
DERIVED_STEM = 6
# A table row holding more of the question's words than the best unit, itself a row of that table, leads
# when it scores this close (the runner-ups' margin, rag.judging.extractive).
ROW_MARGIN = _FITTED.row_margin
# A unit as close as the best one that holds this much more of the IDF mass of the question's key words leads
# (`_saying_most_first`; squad2, first quote right, without the bound on the cosine: .4 / .25 / .1 more:
# +2 / +6 / +3 of 1,278)
SAYS_MORE = _FITTED.says_more
BUDGET = 16  # units scored by meaning per question (their vectors are cached)
JOINED_UNITS = 4  # ... and of each other-language passage joined to them (rag.answering.pools), in reading order
# Across languages some units are close to every question in the asker's language (an English sentence
# naming a Chinese document, a list of holidays): what counts is how much closer a unit is to this question
# than to questions in general. Each other-language unit loses this share of its closeness to the
# questions below beyond the mean of those units (answers holding the gold: handbook across languages
# .143 -> .429, squad2-zh .605 -> .684; BENCHMARKS.md). The same questions in each language the answer
# frame is written in (rag.words.languages.TEXTS): handbook-other .778 -> .889, squad2-other .702 -> .693.
GENERAL_WEIGHT = _FITTED.general_weight
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


@dataclass
class ScoredUnit:
    unit: Unit
    lexical: float  # IDF mass of the question's words it or its section's heading (if named) contains
    coverage: float  # ... as a share of the question's IDF mass
    cosine: float = 0.0  # on the question language's scale (rag.judging.scales), so units of both languages compare
    raw: float = 0.0  # as the model measured it
    score: float = 0.0
    translated: float = 0.0  # in another language than the question: share of the question's words it holds translated
    prior: float = 1.0  # its passage's rank as a weight on its word scores (lexical has it already)
    general: float = 0.0  # what its closeness to questions in general took off its cosine (across languages)
    # The share of the IDF mass of the question's key words it holds: not how the question asks (公司, 员工),
    # nor single Chinese characters (丢 of 发票丢了)
    said: float = 0.0
    # ... held by it with its passage's title and headings, translated where it is in the dictionary's other
    # language than the question's (rag.words.bilingual): what a reader sees the unit is about
    said_under: float = 0.0
    # What the question's words its English gloss holds add to its score (a Chinese unit, an English
    # question): it only orders the excerpts chosen (rag.judging.extractive)
    glossed: float = 0.0

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
    # the best one would answer the opposite (rag.judging.negation)
    opposite: bool = False
    starts: list[int] = field(default_factory=list)  # where each passage begins in its document
    # The question's names and numbers (tokens), each with the tokens it is written as in either language
    names: dict[str, frozenset[str]] = field(default_factory=dict)
    # Of a question that asks more than one thing (rag.judging.parts): each ask with its own evidence
    parts: list[AnsweredPart] = field(default_factory=list)

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
    analysis: QuestionAnalysis | None = None,
) -> Evidence:
    """Score the quotable units of `sources` (best first) against the question (and its rewrite). The
    last `joined` sources are the other language's best passages joined to the top ones (rag.answering.pools): the
    first `JOINED_UNITS` units of each are scored beside the top passages' shortlist. `analysis`: the
    question (and `query`) as rag.judging.analysis read it, when the caller has it."""
    if analysis is None:
        analysis = analyse(question, query, idf)
    elif (analysis.text, analysis.rewritten) != (question, query):
        raise ValueError("the analysis is of another question")
    question_terms = list(analysis.tokens)
    # The knowledge base's own words for the question's words it never uses weigh as the question's ("bike":
    # the guide's "bicycle"), each by its own rarity.
    found_for = dict(analysis.synonyms)
    weights = dict(analysis.weights)
    total = sum(weights.values()) or 1.0
    keys = dict(analysis.key_weights)
    key_total = sum(keys.values()) or 1.0
    language = analysis.language
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
    translated_total = sum(max(g.values(), default=0.0) for _, g in groups) or 1.0
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
            found = sum(max((w for t, w in g.items() if t in unit_words), default=0.0) for _, g in groups)
            scored.translated = found / translated_total
        candidates.append(scored)
    if similarity is None:  # no model to judge meaning: only shared words can say a unit is relevant
        chosen = sorted((c for c in candidates if c.lexical > 0), key=lambda s: -s.lexical)[:10]
    else:
        # Across languages the passages' order says less (a Chinese question's English passages rank close
        # together): half the budget goes to the units holding the most of the question's words, translated.
        across_only = all(p != language for p in languages[:first])
        chosen = _shortlist([c for c in candidates if c.unit.source < first], budget, across_only)
        chosen += _first_units([c for c in candidates if c.unit.source >= first], JOINED_UNITS)
    _credit_glosses(chosen, language, languages, groups, translated_total, held, idf)
    _score(chosen, sources, similarity, language, languages, translated, total)
    _said_under(question, language, chosen, sources, languages, keys, key_total, held)
    # The near miss is judged on the top passages alone, as in a knowledge base of one language.
    # ... and a word is no near miss when the best sentence in the question's language (the language of the
    # synonyms) holds one of them: "per diem" where the travel policy says "daily meal allowance"
    own_best = next((c for c in chosen if languages[c.unit.source] == language), None)
    best_words = set(tokenize(own_best.unit.matched_text)) if found_for and own_best is not None else set()
    # (the question is put in its own words when that sentence, or its headings, holds one: "Booking leave")
    under = set(tokenize(sources[own_best.unit.source].context)) if best_words else set()
    paraphrased = any(t in best_words | under for found in found_for.values() for t in found)
    missing = missing_terms(question, language, question_terms, sources[:first], languages,
                            [c for c in chosen if c.unit.source < first], idf, terms, paraphrased)
    missing = tuple(m for m in missing if not any(t in best_words for t in found_for.get(m, ())))
    evidence = Evidence(chosen, units, {}, missing, languages, [(c.file, c.context) for c in sources],
                        starts=[c.start for c in sources],
                        names=_names_written(question, language, analysis.names))
    # The gate reads the language of the unit that will be quoted first, and that language's best cosine.
    quoted = languages[chosen[0].unit.source] if chosen else language
    top = max((u for u in chosen if languages[u.unit.source] == quoted), key=lambda u: u.cosine, default=None)
    evidence.language = quoted
    sentence = on_passage_scale(top.raw, language, evidence.language, "sentence") if top else 0.0
    evidence.signals = _signals(analysis.names, sentence, chosen, sources, missing, weights, total,
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
        said = _signals(analysis.names, cosine, own, sources, missing, weights, total, found_for)
        evidence.others[other] = said | {"translated": round(max(c.translated for c in own), 4)}
    led = denial_first(question, language, evidence.units, lambda s: s.unit.matched_text,
                       lambda s: languages[s.unit.source], lambda s: s.score)
    evidence.opposite = led is None
    evidence.units = led or evidence.units
    if not analysis.asks_not:  # (else the sentence that denies leads, as it is)
        evidence.units = kind_first(question, language, evidence.units, lambda s: s.unit.matched_text,
                                    lambda s: languages[s.unit.source], lambda s: s.score,
                                    lambda s: s.cosine, lambda s: s.said_under > 0)
    if not evidence.opposite and analysis.kind is None:
        evidence.units = _saying_most_first(evidence.units, languages)
    evidence.units = _named_row_first(evidence.units, sources)
    return evidence


def _saying_most_first(units: list[ScoredUnit], languages: list[str]) -> list[ScoredUnit]:
    """`units` led by the one of the best one's language that holds the most of the question's key words
    (`said`), of those within `AS_CLOSE` of the best by score and by meaning alone (the cosine), when it
    holds `SAYS_MORE` more of them: for "出差报销怎么报？" the model puts 第二条 (出差 alone) a hair above
    第十二条, which says 出差 and 报销. Not a sentence further in meaning that shares more words ("I lost my
    work computer": "Personal computers must never…", .025 below "Report immediately any lost or stolen
    device"). Unchanged where the best one does not lead by its score alone (a denial, the kind asked)."""
    best = units[0] if units else None
    if best is None or best is not max(units, key=lambda s: s.score):
        return units
    own = languages[best.unit.source]
    close = [s for s in units if languages[s.unit.source] == own
             and s.score >= best.score - AS_CLOSE and s.cosine >= best.cosine - AS_CLOSE]
    lead = max(close, key=lambda s: s.said)
    if lead.said - best.said < SAYS_MORE:
        return units
    return [lead] + [s for s in units if s is not lead]


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


def _shortlist(candidates: list[ScoredUnit], budget: int, across: bool = False) -> list[ScoredUnit]:
    """Up to `budget` units: those of the best passages in reading order, and a quarter of the budget kept
    for the units of later passages that share the most rare words with the question. `across` (every
    passage is in another language than the question): half of it (squad2-zh answers holding the gold .868
    -> .895 and lawref-en .231 -> .308), and a unit's translated words count whatever its passage's rank —
    the order says little there, and gold articles ranked 5th went unread (lawref-en .385 -> .462)."""
    share = 2 if across else 4
    by_words = sorted((c for c in candidates if c.words > 0),
                      key=lambda s: -(s.lexical + s.translated if across else s.words))
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


Groups = list[tuple[tuple[str, ...], dict[str, float]]]  # a question word: its tokens, its translations


def _translated_groups(question: str, language: str, idf: Idf) -> Groups:
    """Each word of the question that the bilingual dictionary translates: its own tokens where it is English
    (which a Chinese unit's English gloss may hold), and the IDF of each of its translations' tokens: a unit
    in the other language is credited, per word, for its rarest one present."""
    # A name or code stands for itself (found, not translated): the shared-word score counts it already.
    groups = [(tuple(word.split()) if language != GLOSSED_LANGUAGE else (), set(tokenize(" ".join(found))))
              for word, found in translations(question, language) if found != (word,)]
    groups = [(phrase, g) for phrase, g in groups if g]
    weights = idf(sorted(set().union(*(g for _, g in groups)))) if groups else {}
    return [(phrase, {t: weights.get(t, 0.0) for t in g}) for phrase, g in groups]


def _credit_glosses(units: list[ScoredUnit], language: str, languages: list[str], groups: Groups,
                    total: float, words_of: dict[int, list[str]], idf: Idf) -> None:
    """Each Chinese unit's `glossed`, for an English question: a word of the question also counts where the
    English gloss of one of the unit's words holds it, by that Chinese word's own rarity (at most the
    question word's weight), beside its three Chinese words (`translated`), which are often not the
    statute's ("change": 走, 倒 and 变化, where the Civil Code writes 变更, "to change; to alter"). A common
    word's other senses say little (以下, "less"; 单位, "work")."""
    if not groups or language == GLOSSED_LANGUAGE:
        return
    chinese = [s for s in units if languages[s.unit.source] == GLOSSED_LANGUAGE]
    glossed = {id(s): english_for(s.unit.matched_text) for s in chinese}
    # Each Chinese word's rarity and its gloss's tokens, once: the units of a question share most words
    meant = {word: set(tokenize(" ".join(english))) for found in glossed.values() for word, english in found}
    rarity = idf(sorted(meant))
    for scored in chinese:
        said = [(rarity.get(word, 0.0), meant[word]) for word, _ in glossed[id(scored)]]
        held = set(words_of[id(scored)])
        found = sum(_word_credit(phrase, weights, held, said) for phrase, weights in groups)
        scored.glossed = TRANSLATED_WEIGHT * scored.prior * (found / total - scored.translated)


def _word_credit(phrase: tuple[str, ...], weights: dict[str, float], held: set[str],
                 said: list[tuple[float, set[str]]]) -> float:
    """What a unit holding the tokens `held`, its words' glosses `said` (each with its word's rarity),
    earns for one English word of the question: its rarest Chinese translation written, or the rarity of a
    word whose gloss holds it, at most the word's weight."""
    written = max((w for t, w in weights.items() if t in held), default=0.0)
    meant = max((rarity for rarity, tokens in said if phrase and tokens.issuperset(phrase)), default=0.0)
    return max(written, min(meant, max(weights.values(), default=0.0)))


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
    texts = [embedded_text(s, sources) for s in units]
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
    rows = terms(list(GENERAL_QUESTIONS[language]), [embedded_text(s, sources) for s in other])
    closeness = [sum(column) / len(column) for column in zip(*rows)]
    centre = sum(closeness) / len(closeness)
    for scored, general in zip(other, closeness):
        scored.general = GENERAL_WEIGHT * (general - centre)
        scored.cosine -= scored.general
        scored.score -= scored.general
    units.sort(key=lambda s: -s.score)


def _names_written(question: str, language: str, names: frozenset[str]) -> dict[str, frozenset[str]]:
    """Each name of the question (its token, of `names`) with the tokens it is written as in either language:
    itself and the dictionary's translations ("shanghai": 上海, 上海市…)."""
    out = {t: {t} for t in names}
    for phrase, found in translations(question, language) if is_known(language) else ():
        for token in tokenize(phrase):
            if token in out:
                out[token] |= {w for f in found for w in tokenize(f)}
    return {t: frozenset(forms) for t, forms in out.items()}


def _signals(names: frozenset[str], sentence: float, units: list[ScoredUnit], sources: list[Chunk],
             missing: tuple[str, ...], weights: dict[str, float], total: float,
             found_for: dict[str, tuple[str, ...]] | None = None) -> dict[str, float]:
    """Answerability signals of the sentence level (the passage-level ones are the gate's own) of a question
    whose names are `names` (rag.judging.analysis); `sentence` is the best unit's cosine on its passage
    language's scale. A name the best passage holds in the knowledge base's own words (`found_for`: "NYC" as
    "New York") is no missing name."""
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
