"""How well a passage supports a sentence of an answer.

Same language: the share of the sentence's weight (IDF of its content words) that the passage
contains, with numbers counted as the most specific words there are — "26 days" is not supported by
a passage that says "25 days", and a number no cited passage states at all makes the sentence unsupported
(missing_numbers). Across languages (a Chinese answer from an English passage) words do not
overlap; there the embedded model's similarity can only catch the clearly unrelated, when one is given.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from rag.words.languages import passage_script, script_language
from rag.words.lexical import Idf, tokenize
from rag.safety.markers import CANONICAL
from rag.words.numbers import passage_numbers, stated_numbers
from rag.types import Chunk

# (sentence, passages) -> cosine similarity of the sentence to each passage
Semantic = Callable[[str, list[Chunk]], list[float]]

_NUMBER = re.compile(r"^\d+(?:[.,]\d+)*$|^[零〇一二三四五六七八九十百千万亿两]+$")


@dataclass(frozen=True)
class SupportThresholds:
    supported: float = 0.6  # at or above: the passage clearly covers the sentence
    unsupported: float = 0.25  # below: clearly not; a marker naming this passage is wrong
    margin: float = 0.3  # a marker moves to a passage that supports the sentence by this much more
    # Across languages the embedded model's cosine only tells clearly unrelated text apart (a right
    # passage scores 0.79-0.86 for a translated sentence, unrelated ones up to 0.94 in the sentence's own
    # language), so it never moves a marker; below this floor the sentence is flagged.
    semantic_floor: float = 0.70


class SupportScorer:
    def __init__(self, idf: Idf | None = None, semantic: Semantic | None = None,
                 thresholds: SupportThresholds | None = None) -> None:
        self.idf = idf
        self.semantic = semantic
        self.thresholds = thresholds or SupportThresholds()

    def scores(self, sentence: str, sources: list[Chunk], basis: list[Chunk] | None = None) -> tuple[list[float], str]:
        """Support of `sentence` by each source (0..1), and how it was measured: "lexical" or "semantic".

        Words are compared when some passage of `basis` (the ones the sentence cites; default all) is in
        the sentence's language; otherwise meaning is, if a semantic scorer is available.
        """
        plain = CANONICAL.sub("", sentence)
        language = script_language(plain)  # words are compared within one script
        same_language = any(passage_script(s) == language for s in (basis or sources))
        if self.semantic is not None and not same_language:
            return [round(float(v), 4) for v in self.semantic(plain, sources)], "semantic"
        return [round(lexical_support(plain, s, self.idf), 4) for s in sources], "lexical"

    def is_supported(self, score: float, method: str) -> bool:
        """Clearly supported: enough to cite an unmarked sentence or to move a marker here."""
        return method == "lexical" and score >= self.thresholds.supported

    def is_better_elsewhere(self, named: float, best: float, method: str) -> bool:
        """The cited passage does not clearly support the sentence, and another clearly does, by a margin."""
        t = self.thresholds
        return (self.is_supported(best, method) and not self.is_supported(named, method)
                and (named < t.unsupported or best - named >= t.margin))

    @staticmethod
    def missing_numbers(sentence: str, passages: list[Chunk]) -> list[str]:
        """Numbers the sentence states that none of `passages` states (in any script: 600 = 六百): a
        sentence with one of those is not supported by them, whatever else they share."""
        stated = stated_numbers(CANONICAL.sub("", sentence))
        if not stated:
            return []
        present = set().union(*(passage_numbers(p.indexed_text) for p in passages))
        return [f"{int(v)}" if v.is_integer() else f"{v}" for v in sorted(stated - present)]

    def is_unsupported(self, score: float, method: str) -> bool:
        if method == "semantic":
            return score < self.thresholds.semantic_floor
        return score < self.thresholds.unsupported


def lexical_support(sentence: str, source: Chunk, idf: Idf | None = None) -> float:
    """IDF-weighted share of the sentence's content words found in the passage (its title and headings too)."""
    words = set(tokenize(sentence))
    if not words:
        return 0.0
    weights = idf(sorted(words)) if idf else {}
    top = max(weights.values(), default=1.0)
    weight = {w: top if _NUMBER.match(w) else weights.get(w, 1.0) for w in words}
    present = set(tokenize(source.indexed_text))
    total = sum(weight.values()) or 1.0
    return sum(v for w, v in weight.items() if w in present) / total
