"""A knowledge base's index in Milvus (Milvus Lite file or server), versioned like the FAISS snapshots.

    <name>                  alias of the live collection: a rebuild fills a new collection, then moves it
    <name>_v<version>       one collection per full build; an incremental reindex upserts and deletes in it
    <name>_v<version>_sentences   its passages' units' vectors (rag.index.sentences), by chunk id; replaced
                            per touched chunk with it, dropped with it
    <name>_meta             per collection: `live/<collection>` → its current version; per version: the
                            manifest and BM25 term statistics (gzip + base64 in VARCHAR parts)

Readers resolve the alias, then that collection's version, and search the collection by name: a query never
mixes two builds. The indexing lock is a file in the index directory, as for FAISS.
"""

from __future__ import annotations

import base64
import gzip
import json
import logging
import re
import threading
import time
from collections.abc import Iterable, Iterator
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np

from rag.index.milvus_schema import (
    SENTENCES_SUFFIX,
    MilvusConfig,
    call,
    chunks_filter,
    connect,
    create_chunk_collection,
    create_sentence_collection,
    chunk_row,
    ids_filter,
    quote,
    sentence_rows,
    sentences_of,
)
from rag.index.milvus_search import MilvusSnapshot, TermCounts
from rag.index.snapshot import IndexBuild, IndexNotFoundError, Manifest, _IndexLock

_BATCH = 1000
_NOT_FOUND = 100  # Milvus' error code for a missing collection or alias
_PART = 60_000  # characters of base64 per meta row (ASCII: under the VARCHAR byte limit)
_log = logging.getLogger(__name__)


class MilvusStore:
    def __init__(self, config: MilvusConfig, index_dir: Path, name: str = "aie") -> None:
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]{0,150}", name):
            raise ValueError(f"invalid Milvus collection name {name!r}: letters, digits and _ only")
        self.config = config
        self.data_dir = index_dir
        self.alias = name
        self.meta = f"{name}_meta"
        self._client: Any = None
        self._connecting = threading.Lock()
        self._loaded: set[str] = set()

    @property
    def client(self) -> Any:
        with self._connecting:
            if self._client is None:
                self._client = connect(self.config)
            return self._client

    def lock(self) -> _IndexLock:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        return _IndexLock(self.data_dir / "index.lock")

    # Reading.

    def live_collection(self) -> str | None:
        found = self._get_or_none(self.client.describe_alias, self.alias)
        return found["collection_name"] if found else None

    def current_version(self) -> str | None:
        collection = self.live_collection()
        return self._version_of(collection) if collection else None

    def current_path(self) -> Path:
        if self.current_version() is None:
            raise IndexNotFoundError(
                f"no index in Milvus at {self.config.display} (alias {self.alias}); build one with "
                "`ai-employee index PATH`"
            )
        return self.data_dir

    def current_manifest(self) -> Manifest | None:
        collection = self.live_collection()
        version = self._version_of(collection) if collection else None
        return self._read_meta(version)[0] if version else None

    def load_current(self) -> MilvusSnapshot:
        collection = self.live_collection()
        version = self._version_of(collection) if collection else None
        if collection is None or version is None:
            self.current_path()  # raises the usual "no index" error
        manifest, terms, gloss_terms = self._read_meta(version)
        self._load(collection)
        sentences = sentences_of(collection) if manifest.sentences else None
        if sentences is not None and not call(self.client.has_collection, sentences):
            _log.warning("Milvus collection %s is missing: %s reads passages without their sentences until "
                         "the next index run adds them", sentences, collection)
            manifest.sentences, sentences = 0, None  # (the next run sees none and writes them)
        if sentences is not None:
            self._load(sentences)
        return MilvusSnapshot(self.client, collection, manifest, terms, gloss_terms, sentences)

    def _version_of(self, collection: str) -> str | None:
        self._load(self.meta)
        rows = self._get_or_none(self.client.get, self.meta, ids=[f"live/{collection}"], output_fields=["body"])
        return rows[0]["body"] if rows else None

    def _get_or_none(self, method: Any, *args: Any, **kwargs: Any) -> Any:
        """`method(…)`, or None when what it reads does not exist (yet)."""
        from pymilvus.exceptions import MilvusException

        try:
            return method(*args, **kwargs)
        except MilvusException as exc:
            if exc.code == _NOT_FOUND:
                return None
            return call(method, *args, **kwargs)  # fails with the one-line error

    def _load(self, collection: str) -> None:
        """Milvus Lite reopens collections released: load each once per process (a no-op on a server). One
        that does not exist (yet) is loaded on a later call."""
        from pymilvus.exceptions import MilvusException

        if collection in self._loaded:
            return
        try:
            self.client.load_collection(collection)
        except MilvusException as exc:
            if exc.code == _NOT_FOUND:
                return
            call(self.client.load_collection, collection)  # fails with the one-line error
        self._loaded.add(collection)

    def _read_meta(self, version: str) -> tuple[Manifest, TermCounts, TermCounts | None]:
        rows = call(self.client.query, self.meta, filter=f"version == {quote(version)} and part >= 0",
                    output_fields=["part", "body"])
        if not rows:
            raise IndexNotFoundError(f"Milvus index version {version} has no manifest; run `ai-employee index`")
        blob = "".join(r["body"] for r in sorted(rows, key=lambda r: r["part"]))
        data = json.loads(gzip.decompress(base64.b64decode(blob)))
        count = data["manifest"]["chunk_count"]
        glosses = TermCounts(data["gloss_df"], count) if "gloss_df" in data else None
        return Manifest.from_dict(data["manifest"]), TermCounts.from_dict(data, count), glosses

    # Writing.

    def write(self, build: IndexBuild, keep: int, timings: dict[str, float]) -> None:
        began = time.perf_counter()
        previous = build.previous if isinstance(build.previous, MilvusSnapshot) else None
        if previous is not None and (previous.legacy
                                     or (build.manifest.glossing and not previous.gloss_field)
                                     or previous.manifest.sentences != build.manifest.sentences):
            # written by an older version (no collection or access fields), without glosses, or with other
            # sentence vectors (none, another version) than this build's: a new collection (the passages'
            # vectors come from the work cache: nothing is embedded again)
            previous = None
        if previous is not None:
            collection = previous.collection
            build.manifest.dense_index = previous.manifest.dense_index
            self._update(collection, build, previous.ids(), previous.gloss_field)
        else:
            collection = f"{self.alias}_v{re.sub(r'[^A-Za-z0-9]', '_', build.manifest.version)}"
            hnsw = len(build.chunks) >= build.hnsw_threshold
            build.manifest.dense_index = "milvus-hnsw" if hnsw else "milvus-flat"
            create_chunk_collection(self.client, collection, int(build.vectors.shape[1]), hnsw,
                                    glossed=bool(build.manifest.glossing))
            self._insert(collection, build.chunks, build.vectors,
                         self._glosses(build, None, bool(build.manifest.glossing)), upsert=False)
            if build.sentences is not None:
                create_sentence_collection(self.client, sentences_of(collection), int(build.vectors.shape[1]))
                self._insert_units(sentences_of(collection), build, range(len(build.chunks)))
        call(self.client.flush, collection)
        if build.sentences is not None:
            call(self.client.flush, sentences_of(collection))
        timings["milvus_write"] = time.perf_counter() - began
        began = time.perf_counter()
        self._write_meta(collection, build)
        self._point(collection, build.manifest.version)
        if previous is None:
            self._switch_alias(collection)
        self._prune(keep)
        timings["publish"] = time.perf_counter() - began

    def _update(self, collection: str, build: IndexBuild, previous_ids: set[str], glossed: bool) -> None:
        """Upsert the chunks of touched files, then delete those no file has any more."""
        rows = [i for i, c in enumerate(build.chunks) if c.file in build.touched_files or c.id not in previous_ids]
        self._insert(collection, [build.chunks[i] for i in rows], build.vectors[rows],
                     self._glosses(build, rows, glossed), upsert=True)
        gone = sorted(previous_ids - {c.id for c in build.chunks})
        for start in range(0, len(gone), _BATCH):
            call(self.client.delete, collection, filter=ids_filter(gone[start : start + _BATCH]))
        if build.sentences is not None:  # the touched chunks' units replaced, the removed ones' deleted
            sentences = sentences_of(collection)
            replaced = sorted({build.chunks[i].id for i in rows} | set(gone))
            for start in range(0, len(replaced), _BATCH):
                call(self.client.delete, sentences, filter=chunks_filter(replaced[start : start + _BATCH]))
            self._insert_units(sentences, build, rows)

    @staticmethod
    def _unit_rows(build: IndexBuild, rows: Iterable[int]) -> Iterator[dict[str, Any]]:
        starts, vectors = build.sentences.starts, build.sentences.vectors
        for row in rows:
            yield from sentence_rows(build.chunks[row].id, vectors[int(starts[row]) : int(starts[row + 1])])

    def _insert_units(self, collection: str, build: IndexBuild, rows: Iterable[int]) -> None:
        """The units of `build`'s chunks at `rows`, in batches."""
        batch: list[dict[str, Any]] = []
        for unit in self._unit_rows(build, rows):
            batch.append(unit)
            if len(batch) == _BATCH:
                call(self.client.insert, collection, batch)
                batch = []
        if batch:
            call(self.client.insert, collection, batch)

    @staticmethod
    def _glosses(build: IndexBuild, rows: list[int] | None, glossed: bool) -> list[list[str]] | None:
        """The glosses of `build`'s chunks at `rows` (all: None) for a collection with glosses (`glossed`:
        empty ones when the build has none, its Chinese files gone), or None for one without."""
        if not glossed:
            return None
        chosen = range(len(build.chunks)) if rows is None else rows
        return [build.glosses[i] if build.manifest.glossing else [] for i in chosen]

    def _insert(self, collection: str, chunks: list, vectors: np.ndarray, glosses: list[list[str]] | None,
                upsert: bool) -> None:
        write = self.client.upsert if upsert else self.client.insert
        for start in range(0, len(chunks), _BATCH):
            part, end = chunks[start : start + _BATCH], start + _BATCH
            part_glosses = glosses[start:end] if glosses is not None else [None] * len(part)
            rows = [chunk_row(c, v, g) for c, v, g in zip(part, vectors[start:end], part_glosses)]
            call(write, collection, rows)

    def _ensure_meta(self) -> None:
        if call(self.client.has_collection, self.meta):
            return
        from pymilvus import DataType

        schema = self.client.create_schema(auto_id=False)
        schema.add_field("key", DataType.VARCHAR, is_primary=True, max_length=512)
        schema.add_field("collection", DataType.VARCHAR, max_length=512)
        schema.add_field("version", DataType.VARCHAR, max_length=256)
        schema.add_field("part", DataType.INT64)  # -1: a live/ pointer row
        schema.add_field("body", DataType.VARCHAR, max_length=65_535)
        schema.add_field("unused", DataType.FLOAT_VECTOR, dim=2)  # Milvus wants one vector field
        index = self.client.prepare_index_params()
        index.add_index("unused", index_type="FLAT", metric_type="L2")
        call(self.client.create_collection, self.meta, schema=schema, index_params=index, consistency_level="Strong")

    def _write_meta(self, collection: str, build: IndexBuild) -> None:
        self._ensure_meta()
        terms = TermCounts.count(build.tokens, [(c.collection, c.access) for c in build.chunks])
        data = {"manifest": asdict(build.manifest), **terms.to_dict()}
        if build.manifest.glossing:
            data["gloss_df"] = TermCounts.count(build.glosses).df
        blob = base64.b64encode(gzip.compress(json.dumps(data, ensure_ascii=False).encode())).decode()
        version = build.manifest.version
        rows = [self._meta_row(f"doc/{version}/{n}", collection, version, n, blob[at : at + _PART])
                for n, at in enumerate(range(0, len(blob), _PART))]
        call(self.client.upsert, self.meta, rows)

    def _point(self, collection: str, version: str) -> None:
        call(self.client.upsert, self.meta, [self._meta_row(f"live/{collection}", collection, version, -1, version)])
        call(self.client.flush, self.meta)

    @staticmethod
    def _meta_row(key: str, collection: str, version: str, part: int, body: str) -> dict[str, Any]:
        return {"key": key, "collection": collection, "version": version, "part": part, "body": body,
                "unused": [0.0, 0.0]}

    def _switch_alias(self, collection: str) -> None:
        if self.alias in call(self.client.list_aliases).get("aliases", []):
            call(self.client.alter_alias, collection, self.alias)
        else:
            call(self.client.create_alias, collection, self.alias)

    def _collections(self) -> list[str]:
        """The chunk collections (not their sentences'), newest first."""
        pattern = re.compile(rf"{re.escape(self.alias)}_v\w+")
        return sorted((c for c in call(self.client.list_collections)
                       if pattern.fullmatch(c) and not c.endswith(SENTENCES_SUFFIX)), reverse=True)

    def _drop(self, collection: str) -> None:
        """A chunk collection and its sentences' (the sentences first: they are nothing without it)."""
        if call(self.client.has_collection, sentences_of(collection)):
            call(self.client.drop_collection, sentences_of(collection))
        call(self.client.drop_collection, collection)

    def _prune(self, keep: int) -> None:
        """Drop all but the `keep` newest collections (never the live one) and the metadata of dropped
        collections and of superseded versions (the previous version of each collection stays readable)."""
        live = self.live_collection()
        for collection in self._collections()[max(keep, 1) :]:
            if collection != live:
                self._drop(collection)
                call(self.client.delete, self.meta, filter=f"collection == {quote(collection)}")
        pointers = call(self.client.query, self.meta, filter="part == -1", output_fields=["collection", "body"])
        current = {r["collection"]: r["body"] for r in pointers}
        versions = call(self.client.query, self.meta, filter="part == 0", output_fields=["collection", "version"])
        by_collection: dict[str, list[str]] = {}
        for row in versions:
            by_collection.setdefault(row["collection"], []).append(row["version"])
        for collection, names in by_collection.items():
            stale = sorted(v for v in names if v != current.get(collection))[:-1]  # keep one previous
            for version in stale:
                call(self.client.delete, self.meta, filter=f"version == {quote(version)}")

    def remove_stale_builds(self) -> list[str]:
        """Collections of runs that died before publishing (no live/ pointer): dropped (call under the lock)."""
        pointed: set[str] = set()
        if call(self.client.has_collection, self.meta):
            self._load(self.meta)
            rows = call(self.client.query, self.meta, filter="part == -1", output_fields=["collection"])
            pointed = {r["collection"] for r in rows}
        stale = [c for c in self._collections() if c not in pointed]
        for collection in stale:
            self._drop(collection)
        kept = set(self._collections())  # and sentences whose chunk collection is gone
        for name in call(self.client.list_collections):
            if name.endswith(SENTENCES_SUFFIX) and name.startswith(f"{self.alias}_v") \
                    and name[: -len(SENTENCES_SUFFIX)] not in kept:
                call(self.client.drop_collection, name)
        return stale
