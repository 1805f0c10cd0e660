"""What retrieval and answering read from a live index, whichever backend holds it: the embedded FAISS +
bm25s snapshot (rag.index.snapshot.Snapshot) or a Milvus collection (rag.index.milvus_search.MilvusSnapshot).

Rankings are (key, score) lists; a key is whatever the backend addresses a chunk by (a row, a chunk id) and
is only handed back to the same index. A row filter restricts a search to a path prefix and to what a
rag.types.Scope allows (collections, access lists), in the backend's form: rows, or a filter expression.
"""

from __future__ import annotations

from collections.abc import Hashable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from rag.index.snapshot import IndexBuild, Manifest
from rag.words.lexical import Idf, TermStats
from rag.types import EVERYTHING, Chunk, Scope

Ranking = list[tuple[Hashable, float]]


class ChunkLookup(Protocol):
    def get(self, chunk_id: str, default: Any = None) -> Chunk | None: ...

    def __contains__(self, chunk_id: object) -> bool: ...


class SearchIndex(Protocol):
    manifest: Manifest

    @property
    def version(self) -> str: ...

    @property
    def lexical(self) -> TermStats: ...

    @property
    def by_id(self) -> ChunkLookup: ...

    def vector(self, chunk_id: str) -> np.ndarray: ...

    def row_filter(self, prefix: str | None, allowed: Scope = EVERYTHING) -> Any: ...

    @property
    def scoped_terms(self) -> bool:
        """Whether `term_weights` knows what each scope reads (False: an index written before it did, which
        the next reindex writes anew even when no document changed)."""
        ...

    def term_weights(self, allowed: Scope = EVERYTHING) -> Idf:
        """`lexical`'s IDF as `allowed` sees the knowledge base: a token only passages it does not allow hold
        weighs as one no passage holds (rag.words.lexical.scoped_idf)."""
        ...

    def dense_ranking(self, vector: np.ndarray, k: int, row_filter: Any) -> Ranking: ...

    def bm25_ranking(self, query: str, k: int, row_filter: Any) -> tuple[Ranking, Any]:
        """The ranking and what `exact_scores` may reuse of it."""
        ...

    @property
    def gloss_terms(self) -> TermStats | None:
        """The glosses' BM25 term weights (None: an index written without glosses)."""
        ...

    def gloss_ranking(self, query: str, k: int, row_filter: Any) -> tuple[Ranking, Any]:
        """BM25 of `query` (in English) over the passages' glosses (rag.words.bilingual.gloss), and what
        `gloss_scores` may reuse of it; empty for an index written without glosses."""
        ...

    def gloss_scores(self, keys: list[Hashable], query: str, state: Any) -> dict[Hashable, float]:
        """The gloss BM25 of each key for `query`."""
        ...

    def exact_scores(self, keys: list[Hashable], vector: np.ndarray, query: str,
                     bm25_state: Any) -> dict[str, dict[Hashable, float]]:
        """Cosine ("dense") and BM25 ("bm25") score of each key, whichever retriever found it."""
        ...

    def sentence_scores(self, keys: list[Hashable], vector: np.ndarray) -> dict[Hashable, float]:
        """Each key's best unit cosine to `vector` (rag.index.sentences); keys without units, and every key of
        an index written without them, are left out."""
        ...

    def chunks_at(self, keys: list[Hashable]) -> list[Chunk]: ...


class IndexStore(Protocol):
    """Where the live index is published: rag.index.snapshot.SnapshotStore (a directory of snapshots) or
    rag.index.milvus_store.MilvusStore (collections behind an alias)."""

    def current_version(self) -> str | None: ...

    def current_manifest(self) -> Manifest | None: ...

    def current_path(self) -> Path:
        """Where the live index is; IndexNotFoundError when there is none."""
        ...

    def load_current(self) -> SearchIndex: ...

    def lock(self) -> AbstractContextManager[Any]:
        """Held by the one indexing run allowed at a time (IndexBusyError otherwise)."""
        ...

    def remove_stale_builds(self) -> list[str]: ...

    def write(self, build: IndexBuild, keep: int, timings: dict[str, float]) -> None:
        """Publish `build` atomically, keeping the `keep` newest versions."""
        ...
