"""The passages an answer is made from, when the knowledge base holds more than one language.

The answer stage reads the top passages; in a knowledge base of Chinese and English documents the
other language's answer often ranks just below them (a Chinese question's own-language passages win
on BM25, and the embedded model's cross-language cosines sit lower and closer together: the onboarding
guide's first day ranks 12th of 62 for "新员工第一天要做什么？"). So the top passages are joined by the best
few of the other language, ranked by meaning alone: their dense cosine, less their closeness to
questions in general in the asker's language (an English sentence naming a Chinese document is close
to every Chinese question; rag.evidence does the same for sentences). Ranked so, the first day is the
2nd English passage. In a knowledge base of one language nothing changes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import lru_cache

import numpy as np

from rag.evidence import GENERAL_WEIGHT
from rag.languages import passage_language
from rag.types import Chunk, Hit

# Other-language passages joined to the top ones (handbook: 2, 3 and 5 measured alike; BENCHMARKS.md).
OTHER_LANGUAGE = 3

Vectors = Callable[[Sequence[Chunk]], np.ndarray]  # the passages' indexed vectors, one row each
General = Callable[[], np.ndarray]  # vectors of topic-free questions in the asker's language, one row each


def answer_passages(language: str, hits: list[Hit], top_k: int, vectors: Vectors, general: General,
                    other: int = OTHER_LANGUAGE) -> list[Chunk]:
    """The top `top_k` passages of `hits` (best first), then up to `other` passages from the rest of `hits`
    in another language than `language` (the question's), best by meaning first — only when `hits`
    hold the question's language and another."""
    chunks = [h.chunk for h in hits]
    languages = [_language(c) for c in chunks]
    if other <= 0 or language not in languages or all(lang == language for lang in languages):
        return chunks[:top_k]
    top = chunks[:top_k]
    rest = [n for n, lang in enumerate(languages) if lang != language]
    dense = np.array([hits[n].scores.get("dense", 0.0) for n in rest])
    closeness = (vectors([chunks[n] for n in rest]) @ general().T).mean(axis=1)
    score = dense - GENERAL_WEIGHT * (closeness - closeness.mean())
    best = [chunks[rest[i]] for i in np.argsort(-score, kind="stable")[:other]]
    taken = {c.id for c in top}
    return top + [c for c in best if c.id not in taken]


@lru_cache(maxsize=65536)
def _language(chunk: Chunk) -> str:
    """A passage's language, judged once (50 candidates take ~4 ms to judge afresh on every question)."""
    return passage_language(chunk)
