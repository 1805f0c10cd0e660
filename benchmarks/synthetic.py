"""Synthetic larger indexes built by tiling a real one (for latency at sizes we do not have)."""

from __future__ import annotations

import numpy as np

from rag.index.lexical_index import LexicalIndex
from rag.index.sentences import SentenceVectors
from rag.index.snapshot import Snapshot, SnapshotStore


class FixedStore(SnapshotStore):
    """Serves one in-memory snapshot (synthetic sizes never touch the disk)."""

    def __init__(self, snapshot: Snapshot) -> None:
        super().__init__(snapshot.path)
        self._fixed = snapshot

    def current_version(self) -> str:
        return self._fixed.version

    def load_current(self) -> Snapshot:
        return self._fixed


def tile_lexical(index: LexicalIndex, copies: int) -> LexicalIndex:
    """The same postings repeated for `copies` disjoint copies of the corpus."""
    import bm25s

    src = index._retriever
    data, indices, indptr = (np.asarray(src.scores[k]) for k in ("data", "indices", "indptr"))
    n = int(src.scores["num_docs"])
    lengths = np.diff(indptr).astype(np.int64)
    new_indptr = np.concatenate([[0], np.cumsum(lengths * copies)])
    token = np.repeat(np.arange(len(lengths)), lengths * copies)
    offset = np.arange(new_indptr[-1], dtype=np.int64) - new_indptr[token]
    copy, within = offset // lengths[token], offset % lengths[token]
    source = indptr[token] + within
    tiled = bm25s.BM25(k1=src.k1, b=src.b)
    tiled.scores = {
        "data": data[source],
        "indices": (indices[source].astype(np.int64) + copy * n).astype(np.int32),
        "indptr": new_indptr,
        "num_docs": n * copies,
    }
    tiled.vocab_dict = src.vocab_dict
    tiled.nonoccurrence_array = getattr(src, "nonoccurrence_array", None)
    return LexicalIndex(tiled, n * copies)


def tile_vectors(vectors: np.ndarray, size: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    rows = np.resize(np.arange(len(vectors)), size)
    out = np.asarray(vectors)[rows].astype(np.float32)
    out[len(vectors):] += rng.normal(0, 0.02, size=(size - len(vectors), vectors.shape[1])).astype(np.float32)
    out /= np.linalg.norm(out, axis=1, keepdims=True)
    return out


def tiled_snapshot(real: Snapshot, copies: int, hnsw_threshold: int) -> Snapshot:
    """`copies` × the real snapshot: same chunks (so answers stay meaningful), perturbed vectors."""
    from dataclasses import replace

    from rag.index.dense import DenseIndex

    size = copies * real.dense.size
    dense = DenseIndex.build(tile_vectors(real.dense.vectors, size), hnsw_threshold=hnsw_threshold)
    manifest = replace(real.manifest, version=f"{real.version}-x{copies}", chunk_count=size)
    glossed = tile_lexical(real.glossed, copies) if real.glossed is not None else None
    lexical = tile_lexical(real.lexical, copies)
    return Snapshot(real.path, manifest, real.chunks * copies, dense, lexical, glossed,
                    tile_sentences(real.sentences, copies))


def tile_sentences(sentences: SentenceVectors | None, copies: int) -> SentenceVectors | None:
    """`copies` × each passage's sentence vectors, perturbed as the passages' are (None: the index has none)."""
    if sentences is None:
        return None
    vectors = tile_vectors(sentences.vectors, copies * len(sentences.vectors))
    return SentenceVectors.of(vectors, np.tile(np.diff(sentences.starts), copies))
