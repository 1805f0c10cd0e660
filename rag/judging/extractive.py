"""Extractive answers: the units of the top passages that best answer the question, quoted and cited.

Used when no answer model is configured (the embedded default). The best-scoring unit comes first, with the
sentence that follows it in its paragraph (the answer is often there: "…to reach Acre. But a storm dispersed
the fleet.") unless it would leave no room for a better runner-up of the same passage, then the runner-ups of
its own section, then — where the passages hold both languages — the other language's best sentence when it is
nearly as good and that language's evidence passed the gate on its own (even past a full budget: the asker may
be under either office's rule; the excerpt in the asker's language is quoted first), then the other runner-ups
when they are nearly as good; at most three sentences in all (an article of a statute or a list item counts as
one), so an answer stays short to read. Short paragraphs are quoted whole (a short article is never cut),
table rows with their column headers (the rows of one table under one header, in its order, whichever of its
passages they come from). Nothing is quoted that shares no content with the question: with no candidate the
answer is a refusal (None).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace

from rag.judging import calibration
from rag.judging.answer_kind import asks_for_code
from rag.words.bilingual import GLOSSED_LANGUAGE
from rag.judging.evidence import Evidence, ScoredUnit, gather_evidence
from rag.words.languages import ByLanguage, detect_language, is_known, passage_language, texts_language
from rag.words.lexical import tokenize
from rag.safety.links import source_urls, unlink
from rag.safety.markers import neutralise
from rag.judging.quotable import ARTICLE, LIST_ITEM, Unit
from rag.words.text import sentence_spans
from rag.types import SECTION_SEPARATOR, Chunk

# An article of a statute or a list item is one provision: it costs one sentence of the budget.
_ITEM = re.compile(ARTICLE.pattern + "|" + LIST_ITEM.pattern[1:])

HEADERS = ByLanguage({
    "zh": "以下是知识库中与问题最相关的原文摘录：",
    "en": "Quoted passages from the knowledge base that best match your question:",
    "de": "Zitate aus der Wissensdatenbank, die am besten zu Ihrer Frage passen:",
    "fr": "Extraits de la base de connaissances qui correspondent le mieux à votre question\u00a0:",
    "es": "Fragmentos de la base de conocimientos que mejor corresponden a su pregunta:",
    "pt": "Excertos da base de conhecimento que melhor correspondem à sua pergunta:",
    "it": "Passaggi della base di conoscenza che meglio corrispondono alla sua domanda:",
    "ja": "ご質問に最も関連する、ナレッジベースの原文の抜粋です：",
    "ko": "질문과 가장 관련 있는 지식 베이스의 원문 발췌입니다:",
})
# A near miss: the knowledge base covers the topic but never mentions what the question is about.
NEAR_MISS = ByLanguage({
    "zh": "知识库中没有提到{terms}。最接近的内容如下，但不一定回答你的问题：",
    "en": "The knowledge base does not mention {terms}. The closest it has, which may not answer your question:",
    "de": "Die Wissensdatenbank erwähnt {terms} nicht. Das Nächstliegende, das Ihre Frage vielleicht nicht "
          "beantwortet:",
    "fr": "La base de connaissances ne mentionne pas {terms}. Ce qui s'en rapproche le plus, sans forcément "
          "répondre à votre question\u00a0:",
    "es": "La base de conocimientos no menciona {terms}. Lo más parecido que contiene, que quizá no responda "
          "a su pregunta:",
    "pt": "A base de conhecimento não menciona {terms}. O mais próximo que contém, que talvez não responda "
          "à sua pergunta:",
    "it": "La base di conoscenza non menziona {terms}. Quanto di più vicino contiene, che potrebbe non "
          "rispondere alla sua domanda:",
    "ja": "ナレッジベースには{terms}の記載がありません。"
          "最も近い内容は次のとおりですが、ご質問の答えではないかもしれません：",
    "ko": "지식 베이스에는 {terms}에 대한 내용이 없습니다. "
          "가장 가까운 내용은 다음과 같지만 질문의 답이 아닐 수 있습니다:",
})
# How each language quotes the terms of a near miss: (opening, closing, separator).
_TERM_QUOTES = {"zh": ("“", "”", "、"), "ja": ("「", "」", "、"), "de": ("„", "“", ", "),
                "fr": ("«\u202f", "\u202f»", ", "), "es": ("«", "»", ", "), "pt": ("«", "»", ", "),
                "it": ("«", "»", ", "), "ko": ("‘", "’", ", ")}
# A quote in another language than the question's is introduced in the asker's language.
FROM_DOCUMENT = {
    ("zh", "en"): "摘自英文文档《{title}》：",
    ("en", "zh"): "From the Chinese document “{title}”:",
    ("de", "en"): "Aus dem englischsprachigen Dokument „{title}“:",
    ("de", "zh"): "Aus dem chinesischsprachigen Dokument „{title}“:",
    ("fr", "en"): "Extrait du document en anglais «\u202f{title}\u202f»\u00a0:",
    ("fr", "zh"): "Extrait du document en chinois «\u202f{title}\u202f»\u00a0:",
    ("es", "en"): "Del documento en inglés «{title}»:",
    ("es", "zh"): "Del documento en chino «{title}»:",
    ("pt", "en"): "Do documento em inglês «{title}»:",
    ("pt", "zh"): "Do documento em chinês «{title}»:",
    ("it", "en"): "Dal documento in inglese «{title}»:",
    ("it", "zh"): "Dal documento in cinese «{title}»:",
    ("ja", "en"): "英語の文書『{title}』より：",
    ("ja", "zh"): "中国語の文書『{title}』より：",
    ("ko", "en"): "영어 문서 『{title}』에서:",
    ("ko", "zh"): "중국어 문서 『{title}』에서:",
}

# ... and one in a language other than the known two, without naming it.
FROM_OTHER_DOCUMENT = ByLanguage({
    "zh": "摘自另一种语言的文档《{title}》：",
    "en": "From the document “{title}”, in another language:",
    "de": "Aus dem anderssprachigen Dokument „{title}“:",
    "fr": "Extrait du document «\u202f{title}\u202f», dans une autre langue\u00a0:",
    "es": "Del documento «{title}», en otro idioma:",
    "pt": "Do documento «{title}», noutra língua:",
    "it": "Dal documento «{title}», in un'altra lingua:",
    "ja": "別の言語の文書『{title}』より：",
    "ko": "다른 언어로 된 문서 『{title}』에서:",
})

# ... and one in the asker's language after such a quote, by its title alone (else it reads as part of the
# document introduced above it: "In Shanghai, how much can I claim for a hotel night?" quotes the China
# office's rule, then the global policy's)
FROM_OWN_DOCUMENT = ByLanguage({
    "zh": "摘自《{title}》：",
    "en": "From “{title}”:",
    "de": "Aus „{title}“:",
    "fr": "Extrait de «\u202f{title}\u202f»\u00a0:",
    "es": "De «{title}»:",
    "pt": "De «{title}»:",
    "it": "Da «{title}»:",
    "ja": "『{title}』より：",
    "ko": "『{title}』에서:",
})

# The margins below are in rag/judging/calibration.json (`quotes`), with what each was measured on.
_FITTED = calibration.default().quotes
RUNNER_UP_MARGIN = _FITTED.runner_up_margin
# A runner-up from the best sentence's section (same file, title and headings) is context and quoted
# within `margin`; one from another section only when its cosine is this close to the best one's: the
# trip-approval article is not quoted beside the meal-allowance ones (BENCHMARKS.md: runner-up precision).
APART = _FITTED.apart
# Where the knowledge base holds both languages, the best sentence of the other language is quoted next
# (before this language's runner-ups) when it scores this close to the best one: a China office rule and
# the global one often answer the same question, and the model cannot tell which the asker means (handbook
# across languages .429 -> .571 of answers holding the gold; .02 / .03 / .05 / .07 measured, BENCHMARKS.md).
ACROSS = _FITTED.across
# ... and one in the asker's language whose own gate failed, when it holds this share of the question's key
# words (rag.judging.evidence.ScoredUnit.said). The same share, with its headings (ScoredUnit.said_under), puts the
# other language's unit first where the best one in the asker's language says none of them (_said_first).
OWN_WORDS = _FITTED.own_words
# ... and one of the other language holding less than this share of the question's words translated, and
# none of its key words, is no second answer beside one in the asker's language, however few of them that
# one holds (_sounding_alike_left_out; the centre of the zh -> en gate's translated signal,
# rag.judging.gate.TRANSLATED)
SOUNDS_ALIKE = _FITTED.sounds_alike
# A document's title this long or longer, written in a quote, names it (shorter ones are common words)
MIN_TITLE = 4


def choose_quotes(evidence: Evidence, *, max_sentences: int = 3, max_chars: int = 900,
                  margin: float = RUNNER_UP_MARGIN, apart: float = APART, across: float = ACROSS,
                  confirmed: tuple[str, ...] | None = None, asked: str = "", code: bool = True) -> list[list[Unit]]:
    """Excerpts to quote, best first: each a list of consecutive units of one passage, at most
    `max_sentences` sentences in all (a table row counts as one) — except that the best unit is never cut
    (a whole short article of four sentences is quoted alone) and the other language's best is quoted even
    when the best excerpt used the whole budget. `confirmed`: the other languages whose evidence passed the
    gate on its own model (None when the gate did not read them); `asked`: the question's language. Without
    `code` (the question asks for none, rag.judging.answer_kind.asks_for_code) no code block is quoted: what the
    evidence holds of it still tells the gate the topic is covered, but it answers nothing in prose."""
    if not code:
        evidence = replace(evidence, units=[u for u in evidence.units if u.unit.kind != "code"])
    evidence = _said_first(_rule_first(evidence, apart), margin, confirmed, asked)
    best = evidence.best
    if best is None:
        return []
    index = {id(u): n for n, u in enumerate(evidence.all_units)}
    excerpts = [[best.unit]]
    used = _sentences(best.unit)
    other = _other_language_best(evidence, across, confirmed, asked)
    follower = _follower(best.unit, evidence)
    if (follower is not None and used + _sentences(follower) <= max_sentences
            and not _needs_room(evidence, follower, other, used, max_sentences, max_chars, margin)):
        excerpts[0].append(follower)
        used += _sentences(follower)
    quoted = {" ".join(u.text.split()) for u in excerpts[0]}
    runners = evidence.units[1:]
    context: set[int] = set()  # (ids)
    if other is not None:  # the other language's answer before this language's runner-ups ...
        # ... but after those of the best one's own section, which it is read with (not a table's other rows:
        # the row asked about is the answer, its header the context)
        context = {id(u) for u in runners if u is not other and u.score >= best.score - margin
                   and u.unit.kind != "row" and _same_section(evidence, u.unit, best.unit)}
        runners = ([u for u in runners if id(u) in context] + [other]
                   + [u for u in runners if u is not other and id(u) not in context])
    # Across languages the cosines sit too close together to vouch for a sentence alone: one in neither the
    # asker's language nor the best one's is quoted only when its language's evidence passed its own gate.
    vouched = (None if confirmed is None or not evidence.languages
               else {evidence.languages[best.unit.source], asked, *confirmed})
    for candidate in runners:
        unit = candidate.unit
        if vouched is not None and evidence.languages[unit.source] not in vouched:
            continue
        if candidate is not other and (used >= max_sentences or candidate.score < best.score - margin):
            if id(candidate) in context:
                continue  # the budget is full: on to the other language's answer
            break
        if (not _same_section(evidence, unit, best.unit) and candidate is not other
                and _apart(evidence, candidate, apart, asked)):
            continue  # another section's sentence: only if it answers nearly as well by meaning alone
        # The other language's answer even past a full budget: the asker may be under either office's rule.
        if (" ".join(unit.text.split()) in quoted or _length(excerpts) + len(unit.text) > max_chars
                or (used + _sentences(unit) > max_sentences and candidate is not other)):
            continue
        quoted.add(" ".join(unit.text.split()))
        used += _sentences(unit)
        for excerpt in excerpts:  # next to an excerpt already chosen: one quote, in reading order
            if unit.kind == "row" and excerpt[0].kind == "row" and _one_table(evidence, excerpt[0], unit):
                excerpt.append(unit)  # rows of one table: one table, one header (also across its passages)
                excerpt.sort(key=lambda u: _place(evidence, u))
                break
            if excerpt[0].source == unit.source and index[id(unit)] == index[id(excerpt[0])] - 1:
                excerpt.insert(0, unit)
                break
            if excerpt[-1].source == unit.source and index[id(unit)] == index[id(excerpt[-1])] + 1:
                excerpt.append(unit)
                break
        else:
            excerpts.append([unit])
    excerpts = _glossed_first(_askers_own_first(excerpts, evidence, other, asked), evidence)
    excerpts = _pointed_to_first(_named_first(excerpts, evidence, other), evidence)
    return _sounding_alike_left_out(excerpts, evidence, asked)


def _sounding_alike_left_out(excerpts: list[list[Unit]], evidence: Evidence,
                             asked: str) -> list[list[Unit]]:
    """`excerpts` without the other language's that say none of the question's key words (with their
    headings, translated) and hold little of its words translated (`SOUNDS_ALIKE`), where the first is in
    the asker's language, however few of them it holds: across languages a sentence close only by how the
    question sounds is no second answer ("出差可以坐一等座吗": 第五条, not the onboarding guide's "first week";
    "Can I expense a cab to the airport?": not the airline class rule beside the China office's taxi rule;
    "I lost my work computer, who do I tell?": not the China office's lost-invoice rule beside the report of
    a lost device, which holds few of its key words). Where the first holds every key word, nor are
    those that say fewer than half of them (`OWN_WORDS`): "Can I work from home?" is answered by the
    home-office rule, not also by the leave rule whose 工作日 ("working day") holds 工作 for "work"."""
    if len(excerpts) < 2 or not is_known(asked) or not evidence.languages:
        return excerpts
    if evidence.languages[excerpts[0][0].source] != asked:
        return excerpts
    scored = {id(s.unit): s for s in evidence.units}
    said = max((scored[id(u)].said for u in excerpts[0] if id(u) in scored), default=0.0)
    every = said >= 1.0 - 1e-9

    def sounds_alike(excerpt: list[Unit]) -> bool:
        units = [scored[id(u)] for u in excerpt if id(u) in scored]
        language = evidence.languages[excerpt[0].source]
        return (language != asked and is_known(language) and bool(units)
                and (all(s.said_under == 0 and s.translated < SOUNDS_ALIKE for s in units)
                     or (every and all(s.said_under < OWN_WORDS for s in units))))

    return [e for e in excerpts if not sounds_alike(e)]


def _glossed_first(excerpts: list[list[Unit]], evidence: Evidence) -> list[list[Unit]]:
    """`excerpts` led by the Chinese one whose sentence scores best when the question's words its English
    gloss holds count (`ScoredUnit.glossed`), where the first is Chinese and leads by its score alone: the
    three Chinese words the dictionary keeps for an English one are often not the statute's. "How does a
    change in the main debt affect the guarantor's liability?" opens with the Civil Code's 第六百九十五条
    (协商变更主债权债务合同内容…), not the rule on a debt transferred in part. Only the order changes: which
    sentences are quoted is judged as before."""
    if len(excerpts) < 2 or not any(s.glossed for s in evidence.units):
        return excerpts
    top = max(evidence.units, key=lambda s: s.score)
    if evidence.languages[excerpts[0][0].source] != GLOSSED_LANGUAGE or all(u is not top.unit
                                                                            for u in excerpts[0]):
        return excerpts  # led for a reason of its own (the kind of answer asked, a denial, a language)
    scored = {id(s.unit): s for s in evidence.units}

    def credited(excerpt: list[Unit]) -> float:
        return max((scored[id(u)].score + scored[id(u)].glossed for u in excerpt if id(u) in scored),
                   default=float("-inf"))

    lead = max((e for e in excerpts if evidence.languages[e[0].source] == GLOSSED_LANGUAGE), key=credited)
    return [lead] + [e for e in excerpts if e is not lead]


def _askers_own_first(excerpts: list[list[Unit]], evidence: Evidence, other: ScoredUnit | None,
                      asked: str) -> list[list[Unit]]:
    """`excerpts` with the other language's answer first when it is written in the asker's language and the
    best one is not: where each office's rule answers, a reader meets their own language's first ("打车能报销吗？":
    the China office's 第六条, then the English policy's taxi rule; "Can I expense a cab to the airport?" the
    other way round), as close by meaning as the two are — unless it says fewer than half the question's key
    words where the best says more (`OWN_WORDS`, with headings: "How many days of marriage leave do I get?" is
    answered by 婚假十天, not the December closure's "three days of annual leave")."""
    if other is None or not evidence.languages or len(excerpts) < 2:
        return excerpts
    if evidence.languages[excerpts[0][0].source] == asked or evidence.languages[other.unit.source] != asked:
        return excerpts
    best = evidence.best
    if best is not None and best.said_under >= OWN_WORDS > other.said_under:
        return excerpts  # the asker's language's sentence says little of what the best one answers
    own = next((e for e in excerpts if any(u is other.unit for u in e)), None)
    return excerpts if own is None else [own] + [e for e in excerpts if e is not own]


def _named_first(excerpts: list[list[Unit]], evidence: Evidence,
                 other: ScoredUnit | None) -> list[list[Unit]]:
    """`excerpts` led by the other language's answer (`other`) when it writes every name and number of the
    question (as asked or translated) and the first writes none: "In Shanghai, how much can I claim for a
    hotel night?" is answered by the China office's rule that names 上海, not the global policy's, which
    names other cities. Only between the two answers: a runner-up that names the place is no answer for
    it ("What's the hotel limit in Lisbon?": not the Portugal Day row)."""
    names = evidence.names.values()
    if other is None or len(excerpts) < 2 or not names:
        return excerpts

    def written(excerpt: list[Unit]) -> int:
        held = set(tokenize(" ".join(u.text for u in excerpt)))
        return sum(1 for forms in names if forms & held)

    lead = next((e for e in excerpts[1:] if any(u is other.unit for u in e)), None)
    if lead is None or written(excerpts[0]) or written(lead) < len(names):
        return excerpts
    return [lead] + [e for e in excerpts if e is not lead]


def _pointed_to_first(excerpts: list[list[Unit]], evidence: Evidence) -> list[list[Unit]]:
    """`excerpts` led by the quotes of a document that the first one names as where the rule is: "How long is
    maternity leave for the China office?" is best matched by the leave policy's "Employees of the China
    office follow 年假与请假制度", a signpost; the rule it points to, quoted too, answers (the signpost stays,
    after it)."""
    if len(excerpts) < 2 or not evidence.sections:
        return excerpts
    lead = " ".join(u.text for u in excerpts[0])
    files = {excerpt[0].source: evidence.sections[excerpt[0].source][0] for excerpt in excerpts}
    own = files[excerpts[0][0].source]
    for excerpt in excerpts[1:]:
        file, context = evidence.sections[excerpt[0].source]
        title = context.split(SECTION_SEPARATOR)[0].strip()
        if file != own and len(title) >= MIN_TITLE and title in lead:
            pointed = [e for e in excerpts if files[e[0].source] == file]
            return pointed + [e for e in excerpts if files[e[0].source] != file]
    return excerpts


def render_quotes(question: str, excerpts: list[list[Unit]], sources: list[Chunk] | None = None,
                  missing: tuple[str, ...] = ()) -> str:
    """`> quoted text [Sn]` lines under a header (a near-miss warning when the question's key terms are in
    no passage); a quote from a passage in another language is introduced by its document's title, and so
    is one in the asker's language that follows such a quote. Document look-alikes of markers neutralised."""
    asked = detect_language(question)
    language = texts_language(asked)  # the frame's: the asker's, else English
    lines = [_near_miss(language, missing) if missing else HEADERS[language]]
    introduced = None  # the intro above, and its document: the next quote from it runs on
    for excerpt in excerpts:
        if sources is not None:
            source = sources[excerpt[0].source]
            intro = _intro(language, asked, source) or (FROM_OWN_DOCUMENT[language] if introduced else None)
            if intro and (source.file, intro) != introduced:
                lines.append(neutralise(intro.format(title=source.title or source.file)))
            introduced = (source.file, intro) if intro else None
        if excerpt[0].kind == "row":
            header = excerpt[0].text.rsplit("\n", 1)[0]
            text = neutralise("\n".join([header, *(u.matched_text for u in excerpt)]))
        else:  # sentences of one paragraph run on; whole paragraphs and code blocks keep their line breaks
            text = neutralise("".join(("\n" if _on_own_lines(u, excerpt[n - 1]) else " ") * bool(n) + u.text
                                      for n, u in enumerate(excerpt)))
        quoted = "\n".join(f"> {line}" if line.strip() else ">" for line in text.split("\n"))
        # A table's rows may come from more than one of its passages: each is cited.
        lines.append(f"{quoted} " + "".join(f"[S{n + 1}]" for n in dict.fromkeys(u.source for u in excerpt)))
    return "\n".join(lines)


def extract_answer(
    question: str,
    sources: list[Chunk],
    idf: Callable[[list[str]], dict[str, float]],
    *,
    similarity: Callable[[list[str]], list[float]] | None = None,
    query: str | None = None,
    evidence: Evidence | None = None,
) -> str | None:
    """Quoted, cited units (`> … [Sn]`) answering `question` from `sources`; None when nothing fits. A link
    in a quote stays one only when it leads to a source's own URL (rag.safety.links)."""
    if not sources:
        raise ValueError("no sources to quote")
    evidence = evidence or gather_evidence(question, sources, idf, similarity, query=query)
    excerpts = choose_quotes(evidence, code=asks_for_code(question, detect_language(question)))
    if not excerpts:
        return None
    return unlink(render_quotes(question, excerpts, sources, evidence.missing), source_urls(s.url for s in sources))


def _other_language_best(evidence: Evidence, across: float, confirmed: tuple[str, ...] | None = None,
                         asked: str = "") -> ScoredUnit | None:
    """The best unit in another language than the best one's, when it scores within `across` of it, the
    question is no near miss and — where the gate read each language's evidence (`confirmed`) — that
    language's evidence passed on its own, or it is in the asker's language, scores above the best one and
    holds most of the question's key words (`OWN_WORDS` of their IDF mass: 打车 → the China office's 出租车
    rule, where the Chinese passage cosine fell short of its gate; not the client-meal article, which shares
    only 报销 with "体检费能报销吗？", above the benefits' "Annual health check")."""
    best = evidence.best
    if best is None or not evidence.languages or across <= 0 or evidence.missing:
        return None  # under a near miss, what is closest in the other language is no answer either
    language = evidence.languages[best.unit.source]
    judged = {language}
    for other in evidence.units:  # each other language's best unit, best first (more than one: a third)
        written = evidence.languages[other.unit.source]
        if written in judged:
            continue
        judged.add(written)
        if other.score < best.score - across:
            return None
        if confirmed is None or written in confirmed:
            return other
        if written == asked and other.score > best.score and other.said >= OWN_WORDS:
            return other
    return None


def _said_first(evidence: Evidence, margin: float, confirmed: tuple[str, ...] | None, asked: str) -> Evidence:
    """`evidence` led by the other language's unit that says the question's key words (`OWN_WORDS` of their
    IDF mass, translated, with its title and headings), when the best unit is in the asker's language and
    says none of them even under its headings, and it scores within the runner-ups' `margin`: the asker's
    language is close only by how questions in it sound ("新员工第一天要做什么？": the marriage-leave rule, where
    the onboarding guide's "Your first day" answers; "春节放几天假？": the carry-over rule, by .08, where the
    holiday table's Spring Festival row does). Units that say none of them are then not quoted, in either
    language."""
    best, languages = evidence.best, evidence.languages
    if best is None or not languages or evidence.missing or best.said_under > 0:
        return evidence
    if languages[best.unit.source] != asked or margin <= 0:
        return evidence
    lead = next((u for u in evidence.units if languages[u.unit.source] != asked
                 and is_known(languages[u.unit.source]) and u.score >= best.score - margin
                 and u.said_under >= OWN_WORDS
                 and (confirmed is None or languages[u.unit.source] in confirmed)), None)
    if lead is None:
        return evidence
    rest = [u for u in evidence.units if u is not lead and u.said_under > 0]
    return replace(evidence, units=[lead, *rest], language=languages[lead.unit.source])


def _apart(evidence: Evidence, candidate: ScoredUnit, apart: float, asked: str) -> bool:
    """Whether a runner-up from another section answers less well than the best sentence: by more than
    `apart` in cosine; close by meaning alone, holding none of the question's words (not the meal-allowance
    articles beside the gym subsidy for "健身房有补贴吗？"; nor, where no sentence holds any, the client-meal
    article beside the hotel ones for "住宾馆一晚能报多少钱"); in another language
    than the asker's, where every sentence's cosine sits close to the others', by more than `apart` in its
    whole score too, which also weighs the question's words it holds translated ("打车能报销吗？": not the
    corporate-card rule beside the taxi one)."""
    best = evidence.best
    if candidate.cosine < best.cosine - apart:
        return True
    if _wordless(candidate) and (not _wordless(best) or _words_judged(evidence, best, candidate, asked)):
        return True  # where no sentence holds the question's words, the cosines sit close together
    across = asked and evidence.languages and evidence.languages[candidate.unit.source] != asked
    return bool(across) and candidate.score < best.score - apart


def _words_judged(evidence: Evidence, best: ScoredUnit, candidate: ScoredUnit, asked: str) -> bool:
    """Whether holding none of the question's words says something of both units: each is in the asker's
    language or the dictionary's other one. A question in German, Italian, Japanese… shares no word with an
    English passage as written, nor translated, so every unit there is wordless."""
    if not asked or not evidence.languages:
        return False
    written = {evidence.languages[u.unit.source] for u in (best, candidate)}
    return all(w == asked or (is_known(asked) and is_known(w)) for w in written)


def _wordless(scored: ScoredUnit) -> bool:
    """Whether a unit holds none of the question's words, as they are or translated."""
    return scored.lexical <= 0 and scored.translated <= 0


def _rule_first(evidence: Evidence, apart: float) -> Evidence:
    """`evidence` led by the rule its best unit refines, when the passages hold it: the best unit of a
    section of the same document that the best unit's section sits under (below the title), as close to the
    question by meaning (within `apart`). A person answers with the rule and then its exception: "How
    many days off do I get per year?" — the 26 days of "Annual leave entitlement" before its "Long service
    days"."""
    best = evidence.best
    if best is None or not evidence.sections:
        return evidence
    file, context = evidence.sections[best.unit.source]
    for scored in evidence.units[1:]:
        owner, heading = evidence.sections[scored.unit.source]
        under = owner == file and heading.count(" › ") >= 1 and context.startswith(heading + " › ")
        if under and scored.cosine >= best.cosine - apart:
            return replace(evidence, units=[scored] + [u for u in evidence.units if u is not scored])
    return evidence


def _one_table(evidence: Evidence, row: Unit, other: Unit) -> bool:
    """Whether two rows are of one table: of one passage, or of one document under the same header (a long
    table is cut into passages that each repeat it)."""
    if row.source == other.source:
        return True
    if not evidence.sections or evidence.sections[row.source][0] != evidence.sections[other.source][0]:
        return False
    return row.text.rsplit("\n", 1)[0] == other.text.rsplit("\n", 1)[0]


def _place(evidence: Evidence, unit: Unit) -> tuple[int, int]:
    """Where a unit stands in its document (its passage's start, then its own), for reading order."""
    return (evidence.starts[unit.source] if evidence.starts else unit.source, unit.start)


def _same_section(evidence: Evidence, unit: Unit, best: Unit) -> bool:
    if unit.source == best.source or not evidence.sections:
        return True
    return evidence.sections[unit.source] == evidence.sections[best.source]


def _intro(language: str, asked: str, source: Chunk) -> str | None:
    """What introduces a quote of `source` to an asker of `asked` (the frame in `language`): nothing when
    it is written in the asker's own language (a German document quoted to a German asker), else its
    language named — or, for a language other than the known two, "in another language"."""
    written = passage_language(source)
    if written == asked:
        return None
    return FROM_DOCUMENT.get((language, written)) if is_known(written) else FROM_OTHER_DOCUMENT[language]


def _near_miss(language: str, missing: tuple[str, ...]) -> str:
    opening, closing, separator = _TERM_QUOTES.get(language, ('"', '"', ", "))
    quoted = separator.join(f"{opening}{neutralise(t)}{closing}" for t in missing[:3])
    return NEAR_MISS[language].format(terms=quoted)


def _follower(unit: Unit, evidence: Evidence) -> Unit | None:
    if unit.kind != "sentence" or unit.following is None:
        return None
    return evidence.all_units[unit.following]


def _needs_room(evidence: Evidence, follower: Unit, other: ScoredUnit | None, used: int, max_sentences: int,
                max_chars: int, margin: float) -> bool:
    """Whether the sentence after the best one would take the room of the second-best unit (the units are
    best first: when the follower is not that unit, it scores no higher): one of the same passage, within
    `margin`, that fits without the follower — after the other language's best, which is quoted first
    ("VPN 密码多久换一次": "Passwords do not expire on a schedule" rather than the advice on passphrases
    after the minimum length)."""
    best, second = evidence.best, evidence.units[1] if len(evidence.units) > 1 else None
    if (second is None or second.unit is follower or second.unit.source != best.unit.source
            or second.score < best.score - margin):
        return False
    ahead = [best.unit] + ([other.unit] if other is not None else [])
    taken = used + sum(_sentences(u) for u in ahead[1:])
    fits = (taken + _sentences(second.unit) <= max_sentences
            and sum(len(u.text) for u in ahead) + len(second.unit.text) <= max_chars)
    return fits and taken + _sentences(follower) + _sentences(second.unit) > max_sentences


def _on_own_lines(unit: Unit, before: Unit) -> bool:
    """Whether a unit is quoted on lines of its own after the one before it: a paragraph, or next to code."""
    return unit.kind in ("paragraph", "code") or before.kind == "code"


def _sentences(unit: Unit) -> int:
    """What a unit costs of the sentence budget: a table row, a code block, an article (第九条 …) or a list
    item is one."""
    if unit.kind in ("row", "code") or (unit.kind == "paragraph" and _ITEM.match(unit.text)):
        return 1
    return max(1, len(sentence_spans(unit.text, clauses=False)))


def _length(excerpts: list[list[Unit]]) -> int:
    return sum(len(u.text) for e in excerpts for u in e)


__all__ = ["FROM_DOCUMENT", "FROM_OTHER_DOCUMENT", "FROM_OWN_DOCUMENT", "HEADERS", "NEAR_MISS", "ScoredUnit",
           "choose_quotes", "extract_answer", "render_quotes"]
