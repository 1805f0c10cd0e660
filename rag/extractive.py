"""Extractive answers: the sentences of the top sources that best match the question, quoted and cited.

Used when no answer model is configured (the embedded default). Sentences of the top sources are
first scored by the IDF mass of the question's terms they contain (rare, specific words count
most); the best few are then re-scored by semantic similarity to the question when a `similarity`
function is given. Quotes are grouped per source, the most relevant source first.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from rag.lexical import tokenize
from rag.prompt import detect_language
from rag.text import sentence_spans
from rag.types import Chunk

HEADERS = {
    "zh": "以下是知识库中与问题最相关的原文摘录：",
    "en": "Quoted passages from the knowledge base that best match your question:",
}


@dataclass(frozen=True)
class _Candidate:
    source: int  # 0-based index into the sources
    start: int
    end: int
    score: float


def extract_answer(
    question: str,
    sources: list[Chunk],
    idf: Callable[[list[str]], dict[str, float]],
    *,
    similarity: Callable[[list[str]], list[float]] | None = None,
    max_sentences: int = 3,
    max_chars: int = 500,
    shortlist: int = 10,
    margin: float = 0.04,
    query: str | None = None,
) -> str:
    """Quoted, cited sentences (`> … [n]`) answering `question` from `sources` (numbered from 1)."""
    if not sources:
        raise ValueError("no sources to quote")
    terms = set(tokenize(question) + (tokenize(query) if query else []))
    weights = idf(sorted(terms))
    candidates: list[_Candidate] = []
    for number, chunk in enumerate(sources):
        prior = 1.0 / (1.0 + 0.35 * number)
        for start, end in sentence_spans(chunk.text):
            sentence = chunk.text[start:end].strip()
            if len(sentence) < 6:
                continue
            overlap = terms & set(tokenize(sentence))
            score = sum(weights.get(t, 0.0) for t in overlap) * prior
            if score > 0:
                candidates.append(_Candidate(number, start, end, score))
    candidates.sort(key=lambda c: -c.score)
    if similarity is not None and candidates:
        # Lexical overlap finds the plausible sentences; meaning decides between them.
        short = candidates[:shortlist]
        top = short[0].score
        semantic = similarity([sources[c.source].text[c.start : c.end] for c in short])
        candidates = sorted(
            (_Candidate(c.source, c.start, c.end, sim + 0.05 * c.score / top) for c, sim in zip(short, semantic)),
            key=lambda c: -c.score,
        )
        # Quote further sentences only when they are nearly as relevant as the best one.
        candidates = [c for c in candidates if c.score >= candidates[0].score - margin]
    elif candidates:
        candidates = [c for c in candidates if c.score >= 0.6 * candidates[0].score]
    chosen: list[_Candidate] = []
    used = 0
    for candidate in candidates:
        length = candidate.end - candidate.start
        if len(chosen) >= max_sentences or (chosen and used + length > max_chars):
            continue
        chosen.append(candidate)
        used += length
    if not chosen:  # nothing overlaps lexically: quote the start of the best source
        first = sources[0].text
        end = sentence_spans(first)[0][1] if first else 0
        chosen = [_Candidate(0, 0, end, 0.0)]
    lines = [HEADERS[detect_language(question)]]
    for number in dict.fromkeys(c.source for c in chosen):  # best source first
        picked = sorted((c for c in chosen if c.source == number), key=lambda c: c.start)
        text = sources[number].text
        quote = " … ".join(text[c.start : c.end].strip() for c in picked)
        lines.append(f"> {quote} [{number + 1}]")
    return "\n".join(lines)
