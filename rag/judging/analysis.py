"""The question, analysed once per answer: what every judging step reads of it (its language, tokens, term
weights, key terms, names, the kind of answer it asks for, whether it asks what is not so or for code).

`analyse(question, rewritten, idf)` makes it; the judge (rag.judging.judge) and the evidence
(rag.judging.evidence.gather_evidence) read it instead of detecting the language and tokenising the question
again. The gate reads the question as retrieval searched it — the rewrite when there is one — so that is
analysed too (`query_language`, `query_terms`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from rag.judging.answer_kind import asked_kind, asks_for_code
from rag.judging.near_miss import question_names
from rag.judging.negation import asks_what_is_not
from rag.words.languages import detect_language
from rag.words.lexical import Idf, tokenize
from rag.words.synonyms import is_key, synonyms


@dataclass(frozen=True)
class QuestionAnalysis:
    text: str  # the question as asked (what is judged and quoted for)
    rewritten: str | None  # its rewrite for retrieval, when there is one
    language: str
    tokens: tuple[str, ...]  # tokenize(text), in order
    # The knowledge base's own words for the question's words it never uses ("bike": "bicycle"), by word
    synonyms: Mapping[str, tuple[str, ...]]
    # The IDF weight of each token of the question, its synonyms and its rewrite (rag.words.lexical)
    weights: Mapping[str, float]
    key_weights: Mapping[str, float]  # ... of its key words: not how the question asks (rag.words.synonyms.is_key)
    names: frozenset[str]  # the tokens of its names, numbers and codes (rag.judging.near_miss.question_names)
    kind: str | None  # the kind of answer it asks for (rag.judging.answer_kind.asked_kind)
    asks_not: bool  # it asks for what is not so (rag.judging.negation.asks_what_is_not)
    wants_code: bool  # it asks for a command or configuration (rag.judging.answer_kind.asks_for_code)
    query_language: str  # of `query`, which the gate reads
    query_terms: tuple[str, ...]  # the distinct tokens of `query`, sorted (lexical coverage)

    @property
    def query(self) -> str:
        """What retrieval searched and the gate reads: the rewrite when there is one, else the question."""
        return self.rewritten or self.text

    @property
    def total_weight(self) -> float:
        return sum(self.weights.values()) or 1.0

    @property
    def key_total(self) -> float:
        return sum(self.key_weights.values()) or 1.0


def analyse(question: str, rewritten: str | None, idf: Idf) -> QuestionAnalysis:
    """`question` (and its rewrite) read once, with the index's term weights `idf`."""
    language = detect_language(question)
    tokens = tokenize(question)
    found_for = synonyms(question, idf)
    extra = [t for found in found_for.values() for t in found]
    weights = idf(sorted(set(tokens + extra + (tokenize(rewritten) if rewritten else []))))
    query = rewritten or question
    return QuestionAnalysis(
        text=question,
        rewritten=rewritten,
        language=language,
        tokens=tuple(tokens),
        synonyms=MappingProxyType(dict(found_for)),
        weights=MappingProxyType(dict(weights)),
        key_weights=MappingProxyType({t: w for t, w in weights.items() if is_key(t)}),
        names=frozenset(question_names(question, language)),
        kind=asked_kind(question, language),
        asks_not=asks_what_is_not(question, language),
        wants_code=asks_for_code(question, language),
        query_language=language if query == question else detect_language(query),
        query_terms=tuple(sorted(set(tokenize(query)))),
    )
