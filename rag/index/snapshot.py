"""Versioned on-disk index snapshots, swapped atomically through a CURRENT pointer file.

Layout under the data dir::

    snapshots/<version>/manifest.json, chunks.jsonl, vectors.npy, [dense.faiss], bm25/, [bm25_gloss/]
    snapshots/.build-<id>/      a snapshot being written (removed if a run dies)
    CURRENT                     name of the live snapshot, replaced with os.replace
    index.lock                  held by the one indexing run allowed at a time

FAISS and BM25 are imported when a snapshot is loaded or written: reading the manifest
(`ai-employee status`, the bot's catalogue of documents) needs none of them.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field, fields
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from cachetools import LRUCache
from filelock import FileLock, Timeout

from rag.words.lexical import Idf, scoped_idf, tokenize
from rag.types import EVERYTHING, Chunk, Scope, collection_of

if TYPE_CHECKING:
    from rag.index.dense import DenseIndex
    from rag.index.lexical_index import LexicalIndex
    from rag.index.sentences import SentenceVectors

_log = logging.getLogger(__name__)
FORMAT_VERSION = 1
GLOSS_DIR = "bm25_gloss"  # the BM25 of the passages' glosses, beside bm25/
ACCESS_LISTS_SINCE = 2  # the metadata version (rag.parsing.loader) that reads access lists
KEPT_MASKS = 64  # scopes whose allowed rows a snapshot keeps (60k rows: 60 kB each)


class IndexNotFoundError(RuntimeError):
    pass


class IndexBusyError(RuntimeError):
    """Another indexing run holds the lock; `holder` says who and since when, when that is known."""

    def __init__(self, message: str, holder: str | None = None) -> None:
        super().__init__(f"{message} (started by {holder})" if holder else message)
        self.holder = holder


class IndexLockLost(RuntimeError):
    """The indexing lock was no longer held when the build was ready to publish: nothing was published."""


@dataclass
class FileRecord:
    hash: str  # sha256 of the content: what change detection compares
    size: int
    chunks: int
    parser: str
    title: str
    version: str = ""  # the version the document declares
    date: str = ""  # the document's date…
    date_source: str = ""  # …and where it came from: "document", "file name", "git" or "file time"
    metadata_version: int = 0  # how the metadata was read (rag.parsing.loader.METADATA_VERSION)
    source: str = ""  # the declared source (rag.sources) it came from; "" for a folder given to `index`
    collection: str = ""  # its collection when a source declares it ("": the first folder of its name)
    languages: dict[str, int] = field(default_factory=dict)  # its passages in each language


@dataclass
class Manifest:
    version: str
    created: str
    roots: list[str]
    embedding_model: str
    dim: int
    tokenizer: str
    chunking: dict[str, int]
    dense_index: str
    chunk_count: int
    files: dict[str, FileRecord] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)
    exclude: list[str] = field(default_factory=list)
    format: int = FORMAT_VERSION
    sources: dict[str, dict[str, str]] = field(default_factory=dict)  # declared source -> type, collection, root
    glossing: str = ""  # rag.words.bilingual.gloss_name of the passages' glosses in a BM25 of their own ("": none)
    sentences: int = 0  # rag.index.sentences.SENTENCES_VERSION of the passages' unit vectors (0: none)

    def collection(self, name: str) -> str:
        """The collection of the indexed file `name` (also when it is no longer indexed, by its source)."""
        record = self.files.get(name)
        if record is not None and record.collection:
            return record.collection
        source = self.sources.get(name.split("/", 1)[0]) if self.sources else None
        return source["collection"] if source else collection_of(name)

    @cached_property
    def languages(self) -> frozenset[str] | None:
        """The languages of the indexed passages; None when a file was indexed before they were counted.
        Worked out once: retrieval reads it for every question."""
        if any(not record.languages for record in self.files.values()):
            return None
        return frozenset(language for record in self.files.values() for language in record.languages)

    def to_json(self) -> str:
        return json.dumps(asdict(self), ensure_ascii=False, indent=1)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Manifest:
        """A manifest as written by this or a later version (fields a later one added are left out: a
        replica not yet upgraded keeps reading what the upgraded indexer publishes)."""
        files = {name: FileRecord(**_known(FileRecord, rec)) for name, rec in data.pop("files", {}).items()}
        return cls(files=files, **_known(cls, data))


def _known(kind: type, data: dict[str, Any]) -> dict[str, Any]:
    names = {f.name for f in fields(kind)}
    return {key: value for key, value in data.items() if key in names}


@dataclass
class IndexBuild:
    """What an indexing run hands the store to publish: every chunk of the new version, aligned with its
    vector and BM25 tokens, and what changed since `previous` (the live index it may update in place)."""

    manifest: Manifest
    chunks: list[Chunk]
    vectors: np.ndarray
    tokens: list[list[str]]
    hnsw_threshold: int
    touched_files: set[str] = field(default_factory=set)  # added, changed or re-dated since `previous`
    previous: Any = None  # the live SearchIndex of this store, when the chunks of unchanged files are its own
    glosses: list[list[str]] = field(default_factory=list)  # each chunk's rag.words.bilingual.gloss ([]: none)
    sentences: Any = None  # each chunk's units' vectors (rag.index.sentences.SentenceVectors; None: none)


@dataclass
class Snapshot:
    path: Path
    manifest: Manifest
    chunks: list[Chunk]
    dense: DenseIndex
    lexical: LexicalIndex
    glossed: LexicalIndex | None = None  # BM25 over the passages' glosses (rag.words.bilingual.gloss)
    sentences: SentenceVectors | None = None  # the passages' units' vectors (rag.index.sentences)
    # The rows each of the scopes last asked may see (_allowed_mask)
    _masks: LRUCache = field(default_factory=lambda: LRUCache(maxsize=KEPT_MASKS), init=False, repr=False,
                             compare=False)
    _masks_lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False, compare=False)

    @property
    def version(self) -> str:
        return self.manifest.version

    @cached_property
    def by_id(self) -> dict[str, Chunk]:
        return {chunk.id: chunk for chunk in self.chunks}

    @cached_property
    def row_of(self) -> dict[str, int]:
        """Chunk id → its row in the dense index (and in `chunks`)."""
        return {chunk.id: row for row, chunk in enumerate(self.chunks)}

    def vector(self, chunk_id: str) -> np.ndarray:
        return np.asarray(self.dense.vectors[self.row_of[chunk_id]], dtype=np.float32)

    # The search interface (rag.index.search_index.SearchIndex): keys are rows, a row filter is an array of rows.

    def row_filter(self, prefix: str | None, allowed: Scope = EVERYTHING) -> np.ndarray | None:
        rows: np.ndarray | None = None
        if prefix and prefix.strip("/"):
            prefix = prefix.strip("/")
            rows = np.array([i for i, c in enumerate(self.chunks)
                             if c.file == prefix or c.file.startswith(prefix + "/")], dtype=np.int64)
        if allowed.unrestricted:
            return rows
        mask = self._allowed_mask(allowed)
        return np.flatnonzero(mask) if rows is None else rows[mask[rows]]

    scoped_terms = True  # the BM25 postings tell which rows hold a token

    def term_weights(self, allowed: Scope = EVERYTHING) -> Idf:
        """The BM25 term weights as `allowed` sees the knowledge base (rag.words.lexical.scoped_idf)."""
        if allowed.unrestricted:
            return self.lexical.idf
        mask = self._allowed_mask(allowed)
        if mask.all():
            return self.lexical.idf
        return scoped_idf(self.lexical.idf, lambda tokens: self.lexical.held_by(tokens, mask))

    def _allowed_mask(self, allowed: Scope) -> np.ndarray:
        """Which rows `allowed` may see (read-only). Kept for the scopes last asked: a question asks for it
        for its search and for its term weights twice."""
        with self._masks_lock:
            mask = self._masks.get(allowed)
        if mask is None:
            mask = self._marked(allowed)
            mask.flags.writeable = False
            with self._masks_lock:
                self._masks[allowed] = mask
        return mask

    def _marked(self, allowed: Scope) -> np.ndarray:
        """Which rows `allowed` may see: whole collections at once, then the access-listed rows one by one."""
        if allowed.collections is None:
            mask = np.ones(len(self.chunks), dtype=bool)
        else:
            mask = np.zeros(len(self.chunks), dtype=bool)
            for name in allowed.collections:
                mask[self._collection_rows.get(name, [])] = True
        if allowed.readers is not None:
            for row in self._listed_rows:
                if mask[row] and allowed.readers.isdisjoint(self.chunks[row].access):
                    mask[row] = False
        return mask

    @cached_property
    def _collection_rows(self) -> dict[str, np.ndarray]:
        rows: dict[str, list[int]] = {}
        for i, chunk in enumerate(self.chunks):
            rows.setdefault(chunk.collection, []).append(i)
        return {name: np.array(r, dtype=np.int64) for name, r in rows.items()}

    @cached_property
    def _listed_rows(self) -> list[int]:
        """Rows of documents with an access list."""
        return [i for i, chunk in enumerate(self.chunks) if chunk.access]

    def dense_ranking(self, vector: np.ndarray, k: int, row_filter: np.ndarray | None) -> list[tuple[int, float]]:
        return self.dense.search(vector, k, row_filter)

    def bm25_ranking(self, query: str, k: int,
                     row_filter: np.ndarray | None) -> tuple[list[tuple[int, float]], np.ndarray | None]:
        tokens = tokenize(query)
        scores = self.lexical.scores(tokens)
        return self.lexical.search(tokens, k, row_filter, scores=scores), scores

    def gloss_ranking(self, query: str, k: int,
                      row_filter: np.ndarray | None) -> tuple[list[tuple[int, float]], np.ndarray | None]:
        """BM25 of `query` (in English) over the passages' glosses, and every row's score (None: no match)."""
        if self.glossed is None:
            return [], None
        tokens = tokenize(query)
        scores = self.glossed.scores(tokens)
        return self.glossed.search(tokens, k, row_filter, scores=scores), scores

    @property
    def gloss_terms(self) -> LexicalIndex | None:
        """The glosses' BM25 term weights (None: no glosses)."""
        return self.glossed

    def gloss_scores(self, keys: list[int], query: str, state: np.ndarray | None) -> dict[int, float]:
        """The gloss BM25 of `keys`, from `gloss_ranking`'s scores of the same `query`."""
        return {key: float(state[key]) if state is not None else 0.0 for key in keys}

    def exact_scores(self, keys: list[int], vector: np.ndarray, query: str,
                     bm25_state: np.ndarray | None) -> dict[str, dict[int, float]]:
        rows = np.array(sorted(keys), dtype=np.int64)
        if len(rows) == 0:
            return {"dense": {}, "bm25": {}}
        cosines = np.asarray(self.dense.vectors[rows]) @ np.asarray(vector, dtype=np.float32)
        if bm25_state is None and query.strip():  # not reused from a ranking of `query`: score it now
            bm25_state = self.lexical.scores(tokenize(query))
        lexical = bm25_state[rows] if bm25_state is not None else np.zeros(len(rows))
        return {
            "dense": {int(r): float(v) for r, v in zip(rows, cosines)},
            "bm25": {int(r): float(v) for r, v in zip(rows, lexical)},
        }

    def sentence_scores(self, keys: list[int], vector: np.ndarray) -> dict[int, float]:
        return self.sentences.best(keys, vector) if self.sentences is not None else {}

    def chunks_at(self, keys: list[int]) -> list[Chunk]:
        return [self.chunks[row] for row in keys]

    def save(self) -> None:
        self.path.mkdir(parents=True, exist_ok=True)
        with open(self.path / "chunks.jsonl", "w", encoding="utf-8") as out:
            for chunk in self.chunks:
                out.write(json.dumps(chunk.to_dict(), ensure_ascii=False) + "\n")
        self.dense.save(self.path)
        self.lexical.save(self.path)
        if self.glossed is not None:
            self.glossed.save(self.path, GLOSS_DIR)
        if self.sentences is not None:
            self.sentences.save(self.path)
        # The manifest goes last: a directory without one is never treated as complete.
        _write_atomic(self.path / "manifest.json", self.manifest.to_json())

    @classmethod
    def load(cls, path: Path) -> Snapshot:
        from rag.index.dense import DenseIndex
        from rag.index.lexical_index import LexicalIndex
        from rag.index.sentences import SentenceVectors

        manifest = read_manifest(path)
        chunks = list(read_chunks(path))
        dense = DenseIndex.load(path)
        lexical = LexicalIndex.load(path, len(chunks))
        glossed = LexicalIndex.load(path, len(chunks), GLOSS_DIR) if manifest.glossing else None
        sentences = SentenceVectors.load(path) if manifest.sentences else None
        if not (len(chunks) == dense.size == lexical.size == manifest.chunk_count) or (
                manifest.sentences and (sentences is None or sentences.passages != len(chunks))):
            raise IndexNotFoundError(f"snapshot {path.name} is inconsistent; run `ai-employee index` again")
        if any(record.metadata_version < ACCESS_LISTS_SINCE for record in manifest.files.values()):
            _log.warning("index %s was built before access lists were read: documents' access lists apply "
                         "from the next reindex (`ai-employee index` or /reindex)", manifest.version)
        return cls(path, manifest, chunks, dense, lexical, glossed, sentences)


def read_chunks(path: Path) -> Iterator[Chunk]:
    """The passages of the snapshot at `path`, in row order (without loading its vectors or BM25)."""
    with open(path / "chunks.jsonl", encoding="utf-8") as lines:
        for line in lines:
            yield Chunk.from_dict(json.loads(line))


def read_manifest(path: Path) -> Manifest:
    data = json.loads((path / "manifest.json").read_text(encoding="utf-8"))
    if data.get("format") != FORMAT_VERSION:
        raise IndexNotFoundError(f"snapshot {path.name} has an unsupported format; rebuild the index")
    return Manifest.from_dict(data)


def _write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
    with open(tmp, "w", encoding="utf-8") as out:
        out.write(text)
        out.flush()
        os.fsync(out.fileno())
    os.replace(tmp, path)


def _fsync_dir(path: Path) -> None:
    """Make a directory's entries (files created, renamed or replaced in it) durable."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_tree(path: Path) -> None:
    """Every file under `path`, then every directory (deepest first), so the whole tree survives a crash."""
    folders = [path]
    for item in path.rglob("*"):
        if item.is_dir():
            folders.append(item)
        elif item.is_file():
            with open(item, "rb") as handle:
                os.fsync(handle.fileno())
    for folder in sorted(folders, key=lambda f: len(f.parts), reverse=True):
        _fsync_dir(folder)


class SnapshotStore:
    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        self.snapshots = data_dir / "snapshots"
        self._pointer = data_dir / "CURRENT"

    def current_version(self) -> str | None:
        try:
            return self._pointer.read_text(encoding="utf-8").strip() or None
        except FileNotFoundError:
            return None

    def current_path(self) -> Path:
        version = self.current_version()
        if version is None or not (self.snapshots / version / "manifest.json").exists():
            raise IndexNotFoundError(
                f"no index in {self.data_dir}; build one with `ai-employee index PATH` (or set AIE_DATA_DIR)"
            )
        return self.snapshots / version

    def current_manifest(self) -> Manifest | None:
        try:
            return read_manifest(self.current_path())
        except IndexNotFoundError:
            return None

    def load_current(self) -> Snapshot:
        return Snapshot.load(self.current_path())

    def write(self, build: IndexBuild, keep: int, timings: dict[str, float]) -> None:
        """Build the FAISS and BM25 indexes of `build` beside the live snapshot, then publish it."""
        from rag.index.dense import DenseIndex
        from rag.index.lexical_index import LexicalIndex

        began = time.perf_counter()
        lexical = LexicalIndex.build(build.tokens)
        glossed = LexicalIndex.build(build.glosses) if build.manifest.glossing else None
        timings["bm25"] = time.perf_counter() - began
        began = time.perf_counter()
        dense = DenseIndex.build(build.vectors, build.hnsw_threshold)
        timings["faiss"] = time.perf_counter() - began
        build.manifest.dense_index = dense.kind
        snapshot = Snapshot(self.new_build_dir(), build.manifest, build.chunks, dense, lexical, glossed,
                            build.sentences)
        began = time.perf_counter()
        snapshot.save()
        self.publish(snapshot.path, snapshot.version, keep)
        timings["write"] = time.perf_counter() - began

    def new_build_dir(self) -> Path:
        path = self.snapshots / f".build-{uuid.uuid4().hex[:12]}"
        path.mkdir(parents=True)
        return path

    def publish(self, build_dir: Path, version: str, keep: int) -> Path:
        """Make a finished build the live snapshot; readers see either the old one or the new one."""
        _fsync_tree(build_dir)
        final = self.snapshots / version
        os.replace(build_dir, final)
        _fsync_dir(self.snapshots)  # the rename is durable before CURRENT names the snapshot
        _write_atomic(self._pointer, version + "\n")
        _fsync_dir(self._pointer.parent)  # …and so is CURRENT's replacement
        self._prune(keep)
        return final

    def remove_stale_builds(self) -> list[str]:
        """Delete leftovers of runs that died mid-way (call while holding the lock)."""
        removed = []
        if self.snapshots.exists():
            for path in self.snapshots.glob(".build-*"):
                shutil.rmtree(path, ignore_errors=True)
                removed.append(path.name)
        return removed

    def _prune(self, keep: int) -> None:
        live = self.current_version()
        finished = sorted(
            (p for p in self.snapshots.iterdir() if p.is_dir() and not p.name.startswith(".")),
            key=lambda p: p.name,
            reverse=True,
        )
        for path in finished[max(keep, 1) :]:
            if path.name != live:
                shutil.rmtree(path, ignore_errors=True)

    def lock(self) -> _IndexLock:
        return _IndexLock(self.data_dir / "index.lock")


class _IndexLock:
    """The data dir's indexing lock (`filelock`: an OS lock on the file, released if the process dies)."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self._lock: FileLock | None = None

    def __enter__(self) -> _IndexLock:
        self._path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = FileLock(self._path, timeout=0, thread_local=False)
        try:
            self._lock.acquire()
        except Timeout:
            raise IndexBusyError("another indexing run is in progress on this data directory") from None
        return self

    def confirm(self) -> bool:
        """Whether this run still holds the lock (a file lock is held until it is released)."""
        return True

    def __exit__(self, *exc: object) -> None:
        self._lock.release()
