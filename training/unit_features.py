"""What the evidence stage measures of each quotable unit (rag.judging.evidence's ScoredUnit), as the features a
learned unit score reads: its closeness in meaning, the question's words it holds (as they are, translated,
under its headings), its passage's rank, where it stands in the passage, its kind and length. Training code:
measured and not kept (training/README.md) — the answer stage keeps its hand-set score."""

from __future__ import annotations

import math

# Characters: a unit's length is read on a log scale up to about this long
LONG_UNIT = 1000

FEATURES = (
    "cosine",  # on the question language's scale, less its closeness to questions in general (across languages)
    "words",  # the question's words it holds as a share of the most any unit holds
    "translated",  # the share of the question's words it holds translated, weighted by its passage's rank
    "coverage",  # the share of the question's IDF mass it holds
    "said",  # the share of the question's key words it holds
    "said_under",  # ... with its passage's title and headings
    "glossed",  # what its English glosses add (a Chinese unit, an English question)
    "prior",  # its passage's rank among those of its language, as 1 / (1 + .35 rank)
    "position",  # where it begins in its passage, 0 (first) to 1
    "length",  # log of its length in characters, 1 at LONG_UNIT
    "paragraph", "row", "code",  # its kind (a sentence is none of these)
    "own_language",  # in the question's language
)


def unit_features(units, sources, languages, language) -> list[list[float]]:
    """Each unit's features, in `FEATURES` order."""
    most = max((u.lexical for u in units), default=0.0) or 1.0
    rows = []
    for scored in units:
        unit = scored.unit
        passage = sources[unit.source].text
        rows.append([
            scored.cosine, scored.lexical / most, scored.prior * scored.translated, scored.coverage, scored.said,
            scored.said_under, scored.glossed, scored.prior, unit.start / max(len(passage), 1),
            math.log1p(len(unit.matched_text)) / math.log1p(LONG_UNIT),
            float(unit.kind == "paragraph"), float(unit.kind == "row"), float(unit.kind == "code"),
            float(languages[unit.source] == language),
        ])
    return rows


def unit_rows(units, sources, languages, language) -> list[dict]:
    """`unit_features` by name, with the evidence stage's own score beside them (the hand-set score, the
    baseline a learned one is measured against)."""
    return [dict(zip(FEATURES, (round(v, 5) for v in row)), score=round(scored.score, 5),
                 source=scored.unit.source, start=scored.unit.start)
            for scored, row in zip(units, unit_features(units, sources, languages, language))]
