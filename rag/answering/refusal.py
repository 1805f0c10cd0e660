"""The honest "not in the knowledge base", with documents worth a look only when they are plausibly related."""

from __future__ import annotations

from collections.abc import Callable

from rag.words.languages import ByLanguage
from rag.words.lexical import tokenize
from rag.safety.links import source_urls, unlink
from rag.answering.prompt import REFUSALS
from rag.types import SECTION_SEPARATOR, Chunk, Hit

SUGGEST = ByLanguage({
    "zh": "可以看看这些文档：", "en": "You might look at:", "de": "Vielleicht helfen diese Dokumente weiter:",
    "fr": "Vous pourriez consulter\u00a0:", "es": "Puede consultar:", "pt": "Pode consultar:",
    "it": "Può consultare:", "ja": "次の文書が参考になるかもしれません：", "ko": "다음 문서를 참고해 보세요:",
})
# A document is suggested when its best passage holds at least this share of the question's
# (IDF-weighted) words: "What is the capital of France?" shares nothing specific with a holiday list.
RELATED_COVERAGE = 0.5


def related_documents(question: str, hits: list[Hit], idf: Callable[[list[str]], dict[str, float]],
                      limit: int = 3, min_coverage: float = RELATED_COVERAGE) -> list[Chunk]:
    """The best passage of up to `limit` documents that share enough of the question's words."""
    weights = idf(sorted(set(tokenize(question))))
    total = sum(weights.values())
    if not total:
        return []
    related: list[Chunk] = []
    seen: set[str] = set()
    for hit in hits:
        if hit.chunk.file in seen:
            continue
        words = set(tokenize(hit.chunk.indexed_text))
        if sum(w for t, w in weights.items() if t in words) / total >= min_coverage:
            seen.add(hit.chunk.file)
            related.append(hit.chunk)
            if len(related) == limit:
                break
    return related


def refusal_text(language: str, related: list[Chunk]) -> str:
    lines = [REFUSALS[language]]
    if related:
        lines.append(SUGGEST[language])
        for chunk in related:
            where = SECTION_SEPARATOR.join(p for p in (chunk.title, chunk.section) if p)
            lines.append(f"• {where} ({chunk.file})")
    # A title is document text too: it may link only to the suggested documents' own URLs.
    return unlink("\n".join(lines), source_urls(c.url for c in related))
