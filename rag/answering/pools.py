"""The passages an answer is made from, when the knowledge base holds more than one language.

The answer stage reads the top passages; in a knowledge base of Chinese and English documents the
other language's answer often ranks just below them (a Chinese question's own-language passages win
on BM25, and the embedded model's cross-language cosines sit lower and closer together: the onboarding
guide's first day ranks 12th of 62 for "新员工第一天要做什么？"). So the top passages are joined by the best
few of the other language, ranked by meaning alone: their dense cosine, less their closeness to
questions in general in the asker's language (an English sentence naming a Chinese document is close
to every Chinese question; rag.judging.evidence does the same for sentences). Ranked so, the first day is the
2nd English passage. In a knowledge base of one language nothing changes.

Each such way of choosing is a draw: candidates ranked one way, of which the first few are taken. Feedback
applies where the draws are joined (`joined`), to every draw alike: a passage people flagged as a wrong
source for the question ranks lower in each, so no draw brings it back by its own measure.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from rag.judging.evidence import GENERAL_WEIGHT
from rag.feedback import reorder
from rag.words.languages import passage_language
from rag.types import Chunk, Hit

# Other-language passages joined to the top ones (handbook: 2, 3 and 5 measured alike; BENCHMARKS.md).
OTHER_LANGUAGE = 3

Vectors = Callable[[Sequence[Chunk]], np.ndarray]  # the passages' indexed vectors, one row each
General = Callable[[], np.ndarray]  # vectors of topic-free questions in the asker's language, one row each


@dataclass(frozen=True)
class Draw:
    """Candidates ranked one way, best first, with the scores they are ranked by: the first `take` of them
    join the answer's passages."""

    hits: list[Hit]
    scores: list[float]
    take: int

    def with_demotions(self, demotions: dict[str, float]) -> Draw:
        """Ranked again with each passage's score lowered by its feedback demotion (rag.feedback.reorder)."""
        if not any(hit.chunk.id in demotions for hit in self.hits):
            return self
        order, lowered = reorder(self.scores, [hit.chunk.id for hit in self.hits], demotions)
        return Draw([self.hits[i] for i in order], [lowered[i] for i in order], self.take)


def draws(language: str, hits: list[Hit], scores: list[float], top_k: int, vectors: Vectors, general: General,
          other: int = OTHER_LANGUAGE) -> list[Draw]:
    """The top `top_k` of `hits` (best first, ranked by `scores`), then — only when `hits` hold the question's
    language (`language`) and another — up to `other` of them in another language, best by meaning."""
    top = Draw(hits, scores, top_k)
    languages = [_language(h.chunk) for h in hits]
    if other <= 0 or language not in languages or all(lang == language for lang in languages):
        return [top]
    rest = [hit for hit, lang in zip(hits, languages) if lang != language]
    dense = np.array([hit.scores.get("dense", 0.0) for hit in rest])
    closeness = (vectors([hit.chunk for hit in rest]) @ general().T).mean(axis=1)
    meaning = dense - GENERAL_WEIGHT * (closeness - closeness.mean())
    order = np.argsort(-meaning, kind="stable")
    return [top, Draw([rest[i] for i in order], [float(meaning[i]) for i in order], other)]


@dataclass(frozen=True)
class Joined:
    """What joining the draws gave."""

    draws: list[Draw]  # each ranked as feedback leaves it
    passages: list[Chunk]  # the answer's passages: each draw's first `take` in turn, none twice


def joined(drawn: list[Draw], demotions: dict[str, float]) -> Joined:
    """The draws with `demotions` (chunk id → factor) applied to each, and the passages they give: the one
    place feedback reaches the passages an answer is made from, whichever draw brings them."""
    ranked = [draw.with_demotions(demotions) for draw in drawn]
    passages: dict[str, Chunk] = {}
    for draw in ranked:
        for hit in draw.hits[: draw.take]:
            passages.setdefault(hit.chunk.id, hit.chunk)
    return Joined(ranked, list(passages.values()))


@lru_cache(maxsize=65536)
def _language(chunk: Chunk) -> str:
    """A passage's language, judged once (50 candidates take ~4 ms to judge afresh on every question)."""
    return passage_language(chunk)
