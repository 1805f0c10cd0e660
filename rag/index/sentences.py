"""Every passage's sentences embedded at index time: what a passage can be quoted for (rag.judging.quotable),
each unit embedded as the answer stage embeds it (with its passage's title and headings).

A question asked in the asker's own words often matches one sentence of a passage closely and the passage as
a whole loosely (the rest of it is about other things); dense retrieval then reads a passage by its own
vector and by its best sentence's (rag.index.retrieval). The same vectors serve the answer stage, which otherwise
embeds the sentences of the passages it reads while the asker waits.

Stored per snapshot as one matrix, the units of row r at `vectors[starts[r]:starts[r + 1]]`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from rag.judging.quotable import embedded_unit_text, quotable_units
from rag.types import Chunk

# What each unit's vector holds: bumped when the units a passage is cut into, or the text embedded for each,
# change (an index whose sentence vectors are of another version has them embedded again).
SENTENCES_VERSION = 1
VECTORS_FILE = "sentences.npy"
STARTS_FILE = "sentence_starts.npy"


def unit_texts(chunk: Chunk) -> list[str]:
    """The texts embedded for `chunk`'s units, in order (none for a navigation passage), but its table rows: a
    row alone is mostly names and numbers, and the model reads it by the names it shares with the question
    ("What's the hotel limit in Lisbon?": each Lisbon holiday row .837, the hotel rule .837). A table is read
    by its passage's own vector, which holds its header."""
    return [embedded_unit_text(chunk, unit) for unit in quotable_units(chunk, 0) if unit.kind != "row"]


@dataclass(frozen=True)
class SentenceVectors:
    vectors: np.ndarray  # (units, dim), L2-normalised as the embedder gives them
    starts: np.ndarray  # (passages + 1,): row r's units are vectors[starts[r]:starts[r + 1]]

    @classmethod
    def of(cls, vectors: np.ndarray, counts: Sequence[int]) -> SentenceVectors:
        """From every unit's vector, passage after passage, and how many units each passage has."""
        starts = np.concatenate([[0], np.cumsum(np.asarray(counts, dtype=np.int64))]).astype(np.int64)
        return cls(np.asarray(vectors, dtype=np.float32), starts)

    @property
    def passages(self) -> int:
        return len(self.starts) - 1

    def best(self, rows: Sequence[int], vector: np.ndarray) -> dict[int, float]:
        """Each row's best unit cosine to `vector` (rows without units are left out)."""
        vector = np.asarray(vector, dtype=np.float32)
        best: dict[int, float] = {}
        for row in rows:
            start, end = int(self.starts[row]), int(self.starts[row + 1])
            if end > start:
                best[row] = float((np.asarray(self.vectors[start:end]) @ vector).max())
        return best

    def save(self, directory: Path) -> None:
        np.save(directory / VECTORS_FILE, self.vectors)
        np.save(directory / STARTS_FILE, self.starts)

    @classmethod
    def load(cls, directory: Path) -> SentenceVectors | None:
        """The snapshot's sentence vectors, or None when it was built without them."""
        if not (directory / STARTS_FILE).exists():
            return None
        return cls(np.load(directory / VECTORS_FILE, mmap_mode="r"), np.load(directory / STARTS_FILE))
