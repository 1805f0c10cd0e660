"""Build a new snapshot beside the live one: incremental, resumable, and published atomically. The index
lock is held only to publish: files are parsed and passages embedded before it is taken."""

from __future__ import annotations

import hashlib
import json
import logging
import time
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from dataclasses import asdict, dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

from rag.access import MAX_IDS, merge_access, parse_ids, read_sidecar
from rag.words.bilingual import GLOSSED_LANGUAGE, gloss, gloss_name
from rag.index.chunking import CHUNKER_VERSION, Chunker
from rag.embedding.base import Embedder
from rag.index.discovery import SourceFile, discover
from rag.index.embed_worker import EmbedWorker
from rag.index.git_dates import commit_dates
from rag.index.roots import indexed_paths, refiled_name
from rag.index.search_index import IndexStore, SearchIndex
from rag.index.sentences import SENTENCES_VERSION, SentenceVectors, unit_texts
from rag.index.snapshot import FileRecord, IndexBuild, IndexLockLost, Manifest
from rag.index.work_cache import WorkCache, text_key
from rag.words.languages import passage_language
from rag.words.lexical import TOKENIZER_NAME, tokenize
from rag.parsing.loader import (
    DATE_FROM_GIT,
    METADATA_VERSION,
    VOLATILE_DATE_SOURCES,
    DocumentLoader,
    FileDate,
    SkipFile,
    file_time,
    shadowed_by_mineru_output,
)
from rag.index.metadata import DocumentMeta
from rag.types import Chunk

_log = logging.getLogger(__name__)


class EmptyIndexError(RuntimeError):
    """Nothing indexable was found; the live snapshot is kept."""


INDEXED_FOLDERS = "the folders indexed with `ai-employee index`"
# What keeps those documents when sources take over (a folder source reading them where they lie)
ADOPT = ("; `ai-employee sources adopt` declares those folders in AIE_SOURCES_FILE as folder sources that keep "
         "their documents and collections")


class MassDeleteRefused(RuntimeError):
    """A sync would take more than half of a source's documents out of the index: nothing is published
    until an admin allows it (`allow_mass_delete`)."""

    def __init__(self, source: str, removing: int, total: int, hint: str = "") -> None:
        super().__init__(f"the sync of {source} would remove {removing} of its {total} documents; nothing was "
                         f"changed (allow it with --allow-mass-delete){hint}")
        self.source, self.removing, self.total = source, removing, total


class CollectionsRenamed(RuntimeError):
    """A build would move indexed documents to another collection, so that a scopes file naming the old one
    no longer reaches them: nothing is published until the admin says so (`rename_collections`)."""

    def __init__(self, moves: Mapping[tuple[str, str], int]) -> None:
        said = ", ".join(f"{count} from {old} to {new}" for (old, new), count in sorted(moves.items()))
        named = ", ".join(sorted({old for old, _ in moves}))
        super().__init__(f"indexing would move documents to another collection ({said}): a scopes file or /scope "
                         f"naming {named} would no longer reach them; nothing was changed (allow it with "
                         "--rename-collections, then update the scopes)")
        self.moves = dict(moves)


@dataclass(frozen=True)
class SourceRoot:
    """A declared source as the builder reads it: the folder its connector keeps and what the source says of
    each document there. With `reuse`, its documents are taken from the live index as they are (it was not
    fetched this time, or its fetch failed) and its folder is read only when the live index cannot serve."""

    name: str
    path: Path
    collection: str
    type: str = "folder"
    documents: Mapping[str, DocumentMeta] = field(default_factory=dict)
    exclude: tuple[str, ...] = ()
    reuse: bool = False
    url_template: str | None = None  # a folder source's footnote link ({path}, {page}) for every document


@dataclass(frozen=True)
class IndexProgress:
    stage: str  # "fetch" | "parse" | "embed" | "build" | "done"
    done: int
    total: int
    detail: str = ""  # for the operator's terminal: what is being fetched may name a document
    source: str = ""  # the source being fetched, by its name alone (what a chat is shown)


@dataclass
class IndexReport:
    version: str
    previous_version: str | None
    roots: list[str]
    files: int
    added: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    unchanged: int = 0
    # Files whose name changed only because the number of roots did (`--add` to a one-root index).
    refiled: list[str] = field(default_factory=list)
    # Documents moved to another collection, by "old → new" (only ever with rename_collections)
    collections_moved: dict[str, int] = field(default_factory=dict)
    # Unchanged content whose version or date is read anew: a new commit, a copy with a new file time,
    # or metadata an older release of the indexer did not read.
    metadata_updated: list[str] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)
    chunks: int = 0
    embedded: int = 0  # passages
    sentences_embedded: int = 0  # their units (rag.index.sentences)
    embedder: str = ""
    dense_index: str = ""
    rebuild_reason: str | None = None
    seconds: float = 0.0
    timings: dict[str, float] = field(default_factory=dict)
    embed_busy: float = 0.0
    stale_builds_removed: list[str] = field(default_factory=list)
    up_to_date: bool = False

    @property
    def indexed(self) -> int:
        return len(self.added) + len(self.changed) + len(self.refiled) + self.unchanged

    def to_dict(self) -> dict[str, object]:
        return {**asdict(self), "indexed": self.indexed}


@dataclass
class _FileResult:
    source: SourceFile
    digest: str
    chunks: list[Chunk]
    record: FileRecord
    tokens: list[list[str]] = field(default_factory=list)
    glosses: list[list[str]] = field(default_factory=list)  # rag.words.bilingual.gloss, per chunk ([]: not glossed)
    units: list[list[str]] = field(default_factory=list)  # per chunk, its units' embedded texts (sentences)
    metadata_updated: bool = False
    content: str = ""  # the digest of what the file holds, before what its source says of it (when parsed)


@dataclass
class _Prepared:
    """A version ready to publish: its files parsed and passages embedded (`results` None: the index is up to
    date already, and `report` says so)."""

    report: IndexReport
    results: list[_FileResult] | None = None
    chunks: list[Chunk] = field(default_factory=list)
    roots: list[Path] = field(default_factory=list)
    exclude: list[str] = field(default_factory=list)
    sources: dict[str, dict[str, str]] = field(default_factory=dict)  # the manifest's declared sources
    previous: object = None  # the live SearchIndex it updates in place, when it reuses that one's chunks
    timings: dict[str, float] = field(default_factory=dict)
    started: float = 0.0


class IndexBuilder:
    def __init__(
        self,
        store: IndexStore,
        embedder: Embedder,
        cache: WorkCache,
        loader: DocumentLoader,
        chunker: Chunker,
        *,
        hnsw_threshold: int = 50_000,
        keep_snapshots: int = 2,
        lock: Callable[[], AbstractContextManager] | None = None,
        sentences: bool = True,
    ) -> None:
        self.store = store
        self.lock = lock or store.lock  # one build at a time: the data dir's file lock unless told otherwise
        self.embedder = embedder
        self.cache = cache
        self.loader = loader
        self.chunker = chunker
        self.hnsw_threshold = hnsw_threshold
        self.keep_snapshots = keep_snapshots
        # Each passage's units embedded too (rag.index.sentences): the manifest's `sentences` version, 0 for none
        self.sentences = SENTENCES_VERSION if sentences else 0

    def build(
        self,
        roots: list[Path] | None = None,
        exclude: list[str] | None = None,
        progress: Callable[[IndexProgress], None] | None = None,
        *,
        rename_collections: bool = False,
    ) -> IndexReport:
        """Index `roots` (None: the live index's). A document the build would move to another collection
        refuses it (CollectionsRenamed) unless `rename_collections`."""
        progress = progress or (lambda _: None)
        return self._published(
            lambda: self._prepare(roots, exclude, progress, rename_collections=rename_collections), progress)

    def build_sources(
        self,
        sources: Callable[[], list[SourceRoot]],
        progress: Callable[[IndexProgress], None] | None = None,
        *,
        allow_mass_delete: bool = False,
    ) -> IndexReport:
        """Index the declared sources `sources()` lists (every one: a source left out loses its documents;
        listed again when another run published while this one prepared)."""
        progress = progress or (lambda _: None)
        return self._published(lambda: self._prepare(None, None, progress, sources(), allow_mass_delete), progress)

    def _published(self, prepare: Callable[[], _Prepared], progress: Callable[[IndexProgress], None]) -> IndexReport:
        """A new version prepared (files parsed, passages embedded) without the lock, then published under
        it. When another run published meanwhile, it is prepared again under the lock, on top of that version
        (what this run parsed is parsed again; what it embedded is in the work cache)."""
        base = self.store.current_version()
        prepared = prepare()
        if prepared.results is None:
            return prepared.report  # already up to date: nothing to publish
        with self.lock() as held:
            if self.store.current_version() != base:
                _log.info("another run published while this one prepared; preparing again on top of it")
                embedded = prepared.report.embedded, prepared.report.sentences_embedded
                prepared = prepare()
                # found in the work cache the second time: still this run's
                prepared.report.embedded += embedded[0]
                prepared.report.sentences_embedded += embedded[1]
                if prepared.results is None:
                    return prepared.report
            return self._publish(prepared, held, progress)

    def _prepare(
        self, roots: list[Path] | None, exclude: list[str] | None, progress: Callable[[IndexProgress], None],
        declared: list[SourceRoot] | None = None, allow_mass_delete: bool = False,
        rename_collections: bool = False,
    ) -> _Prepared:
        started = time.perf_counter()
        timings: dict[str, float] = {}
        previous = self._previous_snapshot()
        prev_manifest = previous.manifest if previous else None
        if declared is not None:
            roots, exclude = [], []
        elif roots is None:
            if prev_manifest is None:
                raise ValueError("no folder given and no previous index to refresh; pass the documents' PATH")
            if prev_manifest.sources:
                raise ValueError("this index is built from the sources in AIE_SOURCES_FILE: run "
                                 "`ai-employee sources sync` to refresh it")
            roots = [Path(r) for r in prev_manifest.roots]
            exclude = prev_manifest.exclude if exclude is None else exclude
        roots = [r.resolve() for r in roots]
        exclude = exclude or []

        rebuild_reason = self._rebuild_reason(prev_manifest)
        if rebuild_reason:
            _log.warning("%s: rebuilding the whole index", rebuild_reason)
        reuse_chunks = previous is not None and rebuild_reason is None
        prev_by_file: dict[str, list[Chunk]] = {}
        if previous is not None and reuse_chunks:
            for chunk in previous.chunks:
                prev_by_file.setdefault(chunk.file, []).append(chunk)

        carried: list[_FileResult] = []
        if declared is None:
            sources, passed = discover(roots, exclude)
        else:
            sources, passed, carried = _discover_sources(declared, prev_manifest, prev_by_file)
            for result in carried:  # their BM25 tokens, aligned with their chunks (from the work cache)
                result.tokens, result.glosses = self._tokens(result.chunks), self._glosses(result)
                result.units = self._units(result.chunks)
        began = time.perf_counter()
        # A document its source dates (a git source's last commit, a page's version date) needs no git log.
        undated = [s for s in sources if not (s.meta and s.meta.date)]
        read = {s.source for s in undated}
        git_dates = commit_dates(roots or [r.path for r in declared or () if r.name in read],
                                 (s.path for s in undated))
        timings["git_dates"] = time.perf_counter() - began
        report = IndexReport(
            version="",
            previous_version=prev_manifest.version if prev_manifest else None,
            roots=[str(r) for r in roots],
            files=len(sources) + len(carried),
            skipped=dict(passed),
            embedder=self.embedder.model_id,
            rebuild_reason=rebuild_reason,
            unchanged=len(carried),
        )
        worker = EmbedWorker(
            self.embedder,
            self.cache,
            on_batch=lambda n: progress(IndexProgress("embed", worker.embedded, worker.queued)),
        ).start()
        try:
            for result in carried:  # their sentences, when the live index has none of this version yet
                self._queue_missing_vectors(result, worker, report)
            results = self._process_files(sources, prev_manifest, prev_by_file, reuse_chunks, git_dates, worker, report,
                                          progress, timings)
            if worker.queued:
                progress(IndexProgress("embed", worker.embedded, worker.queued, "finishing"))
            waited = time.perf_counter()
            worker.finish()
            timings["embed_wait"] = time.perf_counter() - waited
        except BaseException:
            worker.abort()
            raise
        timings["embed"] = worker.busy_seconds
        report.embed_busy = worker.busy_fraction

        results = carried + results
        chunks = [c for r in results for c in r.chunks]
        prev_files = set(prev_manifest.files) if prev_manifest else set()
        report.removed = sorted(prev_files - {r.source.rel for r in results})
        declared_sources = _declared(declared)
        if prev_manifest is not None and declared is not None:
            _match_renamed(report, results, prev_manifest, _taken_over(prev_manifest))
        if declared is not None and not allow_mass_delete:
            _refuse_mass_delete(report.removed, prev_manifest)
        if prev_manifest is not None and declared is None:
            old_name = refiled_name(prev_manifest.roots, report.roots)
            if old_name is not None:
                _match_renamed(report, results, prev_manifest, lambda result: old_name(result.source.rel))
            report.collections_moved = _collections_moved(results, prev_manifest, report.roots, rename_collections)
        if (
            previous is not None
            and rebuild_reason is None
            and not (report.added or report.changed or report.removed or report.metadata_updated or report.refiled)
            and prev_manifest.roots == report.roots
            and prev_manifest.exclude == exclude
            and prev_manifest.sources == declared_sources
            and prev_manifest.glossing == _glossing(results)
            and prev_manifest.sentences == self.sentences
            and previous.scoped_terms
        ):
            report.version, report.chunks, report.up_to_date = previous.version, len(chunks), True
            report.dense_index = prev_manifest.dense_index
            report.seconds = round(time.perf_counter() - started, 3)
            progress(IndexProgress("done", 1, 1, previous.version))
            return _Prepared(report)
        if not chunks:
            where = ", ".join(report.roots) or ", ".join(s.name for s in declared or ()) or "the sources"
            raise EmptyIndexError(
                f"nothing to index under {where}: {len(report.skipped)} file(s) skipped; "
                "the previous index (if any) is still serving"
            )
        return _Prepared(report, results, chunks, roots, exclude, declared_sources,
                         previous if reuse_chunks else None, timings, started)

    def _publish(self, prepared: _Prepared, held: object, progress: Callable[[IndexProgress], None]) -> IndexReport:
        """Write the prepared version and make it the live one (under the lock)."""
        report, chunks, timings = prepared.report, prepared.chunks, prepared.timings
        progress(IndexProgress("build", 0, 1, f"{len(chunks)} chunks"))
        build = self._assemble(chunks, prepared.results, prepared.roots, prepared.exclude, report.skipped, timings)
        build.manifest.sources = prepared.sources
        if prepared.previous is not None:
            build.previous = prepared.previous
            build.touched_files = {*report.added, *report.changed, *report.metadata_updated}
        _confirm_lock(held)
        report.stale_builds_removed = self.store.remove_stale_builds()
        self.store.write(build, self.keep_snapshots, timings)
        report.version = build.manifest.version
        report.chunks = len(chunks)
        report.dense_index = build.manifest.dense_index
        report.timings = {k: round(v, 3) for k, v in timings.items()}
        report.seconds = round(time.perf_counter() - prepared.started, 3)
        progress(IndexProgress("done", 1, 1, build.manifest.version))
        return report

    def _previous_snapshot(self) -> SearchIndex | None:
        if self.store.current_version() is None:
            return None
        try:
            return self.store.load_current()
        except Exception as exc:  # noqa: BLE001 - a broken old snapshot only means a full rebuild
            _log.warning("previous snapshot unusable (%s); building from scratch", exc)
            return None

    def _rebuild_reason(self, manifest: Manifest | None) -> str | None:
        if manifest is None:
            return None
        if manifest.embedding_model != self.embedder.model_id:
            return f"embedding model changed from {manifest.embedding_model} to {self.embedder.model_id}"
        if manifest.tokenizer != TOKENIZER_NAME:
            return f"BM25 tokenizer changed from {manifest.tokenizer} to {TOKENIZER_NAME}"
        if manifest.chunking != self._chunking_signature():
            return "chunking settings or chunker version changed"
        return None

    def _chunking_signature(self) -> dict[str, int]:
        return {**asdict(self.chunker.config), "version": CHUNKER_VERSION}

    def _process_files(
        self,
        sources: list[SourceFile],
        prev_manifest: Manifest | None,
        prev_by_file: dict[str, list[Chunk]],
        reuse_chunks: bool,
        git_dates: dict[Path, str],
        worker: EmbedWorker,
        report: IndexReport,
        progress: Callable[[IndexProgress], None],
        timings: dict[str, float],
    ) -> list[_FileResult]:
        results: list[_FileResult] = []
        parse_time = tokenize_time = 0.0
        for i, source in enumerate(sources):
            progress(IndexProgress("parse", i, len(sources), source.rel))
            began = time.perf_counter()
            try:
                result = self._process_file(source, prev_manifest, prev_by_file, reuse_chunks, git_dates)
            except SkipFile as skip:
                report.skipped[source.rel] = skip.reason
                continue
            except Exception as exc:  # noqa: BLE001 - one bad file never stops the run
                _log.exception("failed to index %s", source.rel)
                report.skipped[source.rel] = f"internal error: {type(exc).__name__}: {exc}"
                continue
            finally:
                parse_time += time.perf_counter() - began
            prev_record = prev_manifest.files.get(source.rel) if prev_manifest else None
            if prev_record is None:
                report.added.append(source.rel)
            elif prev_record.hash != result.digest:
                report.changed.append(source.rel)
            else:
                report.unchanged += 1
                if result.metadata_updated:
                    report.metadata_updated.append(source.rel)
            began = time.perf_counter()
            result.units = self._units(result.chunks)
            self._queue_missing_vectors(result, worker, report)
            result.tokens, result.glosses = self._tokens(result.chunks), self._glosses(result)
            tokenize_time += time.perf_counter() - began
            results.append(result)
        progress(IndexProgress("parse", len(sources), len(sources)))
        timings["parse_chunk"] = parse_time
        timings["tokenize"] = tokenize_time
        return results

    def _process_file(
        self,
        source: SourceFile,
        prev_manifest: Manifest | None,
        prev_by_file: dict[str, list[Chunk]],
        reuse_chunks: bool,
        git_dates: dict[Path, str],
    ) -> _FileResult:
        reason = shadowed_by_mineru_output(source.path)
        if reason:
            raise SkipFile(reason)
        try:
            data = source.path.read_bytes()
            fallback = _fallback_date(source.path, git_dates)
        except OSError as exc:
            raise SkipFile(f"unreadable: {exc.strerror}") from None
        sidecar = read_sidecar(source.path)
        # The access list is part of what the file says: changing it re-indexes the file.
        digest = content = hashlib.sha256(data if sidecar is None else data + b"\0access\0" + sidecar).hexdigest()
        if source.source:  # what the source says of it (its URL, version, readers…) is part of it too
            said = json.dumps([source.collection, source.meta.to_dict() if source.meta else {}], sort_keys=True)
            digest = hashlib.sha256(f"{digest}\0source\0{said}".encode()).hexdigest()
        prev = prev_manifest.files.get(source.rel) if prev_manifest else None
        if reuse_chunks and prev is not None and prev.hash == digest and source.rel in prev_by_file:
            if prev.metadata_version == METADATA_VERSION:
                return self._reuse(source, digest, prev, prev_by_file[source.rel], fallback)
        doc = self.loader.load(source.path, source.rel, data, fallback_date=fallback)
        if sidecar is not None:
            try:
                doc.access = merge_access(doc.access, parse_ids(sidecar.decode("utf-8", "replace")))
            except ValueError as exc:
                raise SkipFile(f"{source.rel}.access: {exc}") from None
            if len(doc.access) > MAX_IDS:
                raise SkipFile(f"access lists hold more than {MAX_IDS} ids in all")
        if source.source:
            _apply_source(doc, source)
        else:
            doc.collection = source.collection
        chunks = self.chunker.chunk(doc)
        if not chunks:
            raise SkipFile("no text to index")
        if source.meta is not None and source.meta.url:
            chunks = _anchored(chunks, source, data if doc.parser == "markdown" else None)
        record = FileRecord(hash=digest, size=len(data), chunks=len(chunks), parser=doc.parser, title=doc.title,
                            version=doc.version, date=doc.modified, date_source=doc.date_source,
                            metadata_version=METADATA_VERSION, source=source.source,
                            collection=doc.collection, languages=_languages(chunks))
        # Same content, parsed again only because an older indexer read less metadata: the snapshot changes.
        upgraded = reuse_chunks and prev is not None and prev.hash == digest and prev.metadata_version != METADATA_VERSION
        return _FileResult(source, digest, chunks, record, metadata_updated=upgraded, content=content)

    @staticmethod
    def _reuse(source: SourceFile, digest: str, prev: FileRecord, chunks: list[Chunk], fallback: FileDate) -> _FileResult:
        """The previous chunks of an unchanged file, re-dated when the date was its commit or file time
        and that moved (text, ids and embeddings stay: the date is not part of what is embedded), and moved to
        the collection its folder now gives it (an index made when several roots named their documents'
        collections after the roots; the build refuses this unless told: _collections_moved)."""
        redate = prev.date_source in VOLATILE_DATE_SOURCES and (prev.date, prev.date_source) != (
            fallback.date, fallback.source
        )
        recollect = not source.source and chunks[0].collection != source.collection
        # Counted again from the kept chunks: an index made before passages' languages were counted, or
        # counted by script alone (a German handbook as "en"), gets them as they are now judged.
        languages = _languages(chunks)
        if not redate and not recollect and prev.languages == languages:
            return _FileResult(source, digest, chunks, prev)
        if redate:
            chunks = [replace(c, doc_date=fallback.date) for c in chunks]
            prev = replace(prev, date=fallback.date, date_source=fallback.source)
        if recollect:
            chunks = [replace(c, collection=source.collection) for c in chunks]
            prev = replace(prev, collection=source.collection)
        record = replace(prev, languages=languages)
        return _FileResult(source, digest, chunks, record, metadata_updated=True)

    def _units(self, chunks: list[Chunk]) -> list[list[str]]:
        return [unit_texts(c) for c in chunks] if self.sentences else [[] for _ in chunks]

    def _queue_missing_vectors(self, result: _FileResult, worker: EmbedWorker, report: IndexReport) -> None:
        """Queue the passages and units of `result` the work cache has no vector of, counted in `report`."""
        passages = list(dict.fromkeys(c.indexed_text for c in result.chunks))
        units = list(dict.fromkeys(t for texts in result.units for t in texts))
        have = self.cache.get_vectors(self.embedder.model_id, (text_key(t) for t in passages + units))
        report.embedded += worker.submit([t for t in passages if text_key(t) not in have])
        report.sentences_embedded += worker.submit([t for t in units if text_key(t) not in have])

    def _assemble(
        self,
        chunks: list[Chunk],
        results: list[_FileResult],
        roots: list[Path],
        exclude: list[str],
        skipped: dict[str, str],
        timings: dict[str, float],
    ) -> IndexBuild:
        began = time.perf_counter()
        keys = [text_key(c.indexed_text) for c in chunks]
        vectors_by_key = self.cache.get_vectors(self.embedder.model_id, keys)
        missing = [c.file for c, k in zip(chunks, keys) if k not in vectors_by_key]
        if missing:
            raise RuntimeError(f"embeddings missing for {len(missing)} chunk(s), e.g. in {missing[0]}")
        vectors = np.vstack([vectors_by_key[k] for k in keys]).astype(np.float32)
        if vectors.shape[1] != self.embedder.dim:
            raise RuntimeError(f"embedder returned dimension {vectors.shape[1]}, expected {self.embedder.dim}")
        sentences = self._sentence_vectors(results, chunks) if self.sentences else None
        timings["load_vectors"] = time.perf_counter() - began

        now = datetime.now(timezone.utc)
        digest = hashlib.sha256("\n".join(c.id for c in chunks).encode()).hexdigest()[:8]
        version = f"{now:%Y%m%dT%H%M%S}{now.microsecond // 1000:03d}-{digest}"
        manifest = Manifest(
            version=version,
            created=now.isoformat(timespec="seconds"),
            roots=[str(r) for r in roots],
            embedding_model=self.embedder.model_id,
            dim=int(vectors.shape[1]),
            tokenizer=TOKENIZER_NAME,
            chunking=self._chunking_signature(),
            dense_index="",  # set by the store that builds it
            chunk_count=len(chunks),
            files={r.source.rel: r.record for r in results},
            skipped=skipped,
            exclude=exclude,  # remembered so a refresh without arguments indexes the same set
            glossing=_glossing(results),
            sentences=self.sentences,
        )
        tokens = [t for r in results for t in r.tokens]
        if len(tokens) != len(chunks):  # BM25 rows must be the chunks' rows
            raise RuntimeError(f"{len(tokens)} BM25 token lists for {len(chunks)} chunks")
        glosses = [g for r in results for g in r.glosses]
        if len(glosses) != len(chunks):
            raise RuntimeError(f"{len(glosses)} glosses for {len(chunks)} chunks")
        return IndexBuild(manifest, chunks, vectors, tokens, self.hnsw_threshold, glosses=glosses,
                          sentences=sentences)

    def _sentence_vectors(self, results: list[_FileResult], chunks: list[Chunk]) -> SentenceVectors:
        units = [texts for r in results for texts in r.units]
        if len(units) != len(chunks):  # sentence rows must be the chunks' rows
            raise RuntimeError(f"units of {len(units)} chunks for {len(chunks)} chunks")
        keys = [text_key(t) for texts in units for t in texts]
        found = self.cache.get_vectors(self.embedder.model_id, keys)
        missing = sum(k not in found for k in keys)
        if missing:
            raise RuntimeError(f"embeddings missing for {missing} sentence(s)")
        vectors = np.vstack([found[k] for k in keys]) if keys else np.zeros((0, self.embedder.dim), np.float32)
        return SentenceVectors.of(vectors, [len(texts) for texts in units])

    def _tokens(self, chunks: list[Chunk]) -> list[list[str]]:
        keys = [text_key(c.indexed_text) for c in chunks]
        cached = self.cache.get_tokens(TOKENIZER_NAME, keys)
        todo = [(k, c.indexed_text) for c, k in zip(chunks, keys) if k not in cached]
        if todo:
            fresh = [tokenize(text) for _, text in todo]
            self.cache.put_tokens(TOKENIZER_NAME, [k for k, _ in todo], fresh)
            cached.update((k, t) for (k, _), t in zip(todo, fresh))
        return [cached[k] for k in keys]

    def _glosses(self, result: _FileResult) -> list[list[str]]:
        """Each chunk's words in English as BM25 tokens (rag.words.bilingual.gloss) where it is Chinese, else [].
        The file's record counts its passages per language already: only a file of several languages has
        each passage judged again."""
        chunks, languages = result.chunks, result.record.languages
        if GLOSSED_LANGUAGE not in languages:
            return [[] for _ in chunks]
        every = set(languages) == {GLOSSED_LANGUAGE}
        name = gloss_name()
        keys = [text_key(c.indexed_text) if every or passage_language(c) == GLOSSED_LANGUAGE else None
                for c in chunks]
        cached = self.cache.get_tokens(name, [k for k in keys if k is not None])
        todo = {k: c.indexed_text for c, k in zip(chunks, keys) if k is not None and k not in cached}
        if todo:
            fresh = [gloss(text) for text in todo.values()]
            self.cache.put_tokens(name, list(todo), fresh)
            cached.update(zip(todo, fresh))
        return [cached[k] if k is not None else [] for k in keys]


def _glossing(results: list[_FileResult]) -> str:
    """The manifest's `glossing` for these files: what glossed their Chinese passages ("": none has one)."""
    return gloss_name() if any(gloss for result in results for gloss in result.glosses) else ""


def _confirm_lock(held: object) -> None:
    """Publish only while this run holds the lock: a lock that expired or was taken may mean another run is
    publishing (its `confirm`, when it has one, asks)."""
    confirm = getattr(held, "confirm", None)
    if confirm is not None and not confirm():
        raise IndexLockLost(
            "the reindex lock was lost before the new index was published (it expired while Redis was "
            "unreachable, or another reindex took it); nothing was published, the previous index is still serving"
        )


def _languages(chunks: list[Chunk]) -> dict[str, int]:
    """How many of a file's passages are in each language: retrieval translates a question word for word
    only for a knowledge base that holds the dictionary's other language."""
    counts: dict[str, int] = {}
    for chunk in chunks:
        language = passage_language(chunk)
        counts[language] = counts.get(language, 0) + 1
    return counts


def _fallback_date(path: Path, git_dates: dict[Path, str]) -> FileDate:
    """A file's last commit date in a git checkout, else its modification time."""
    committed = git_dates.get(path.resolve())
    return FileDate(committed, DATE_FROM_GIT) if committed else file_time(path)


def _match_renamed(report: IndexReport, results: list[_FileResult], prev_manifest: Manifest,
                   old_name: Callable[[_FileResult], str | None]) -> None:
    """A file only renamed — by a change in the number of roots, or by a folder source that now reads an
    indexed folder — is neither added nor removed: `old_name` gives its name in the live index (None: new)."""
    removed, added = set(report.removed), set(report.added)
    for result in results:
        new = result.source.rel
        old = old_name(result) if new in added else None
        if old is None or old not in removed:
            continue
        added.discard(new)
        removed.discard(old)
        same = prev_manifest.files[old].hash == result.content
        (report.refiled if same else report.changed).append(new)
    report.added = [r for r in report.added if r in added]
    report.removed = sorted(removed)


def _taken_over(prev_manifest: Manifest) -> Callable[[_FileResult], str | None]:
    """For a declared source's document, the name `ai-employee index` gave the same file, when the live index
    holds it so and the source keeps it in its collection (moving to a sources file renames, never deletes)."""
    indexed = [name for name, record in prev_manifest.files.items() if not record.source]
    where = indexed_paths(prev_manifest.roots, indexed) if indexed else {}

    def old_name(result: _FileResult) -> str | None:
        old = where.get(result.source.path.resolve()) if where else None
        return old if old is not None and prev_manifest.collection(old) == result.chunks[0].collection else None

    return old_name


def _collections_moved(results: list[_FileResult], prev_manifest: Manifest, roots: list[str],
                       allowed: bool) -> dict[str, int]:
    """How many documents of the live index this build moves to another collection ("old → new": count);
    CollectionsRenamed unless `allowed`."""
    old_name = refiled_name(prev_manifest.roots, roots) or (lambda name: None)
    moves: dict[tuple[str, str], int] = {}
    for result in results:
        name = result.source.rel
        old = name if name in prev_manifest.files else old_name(name)
        if old is None or old not in prev_manifest.files:
            continue  # a new document
        before, after = prev_manifest.collection(old), result.chunks[0].collection
        if before != after:
            moves[(before, after)] = moves.get((before, after), 0) + 1
    if moves and not allowed:
        raise CollectionsRenamed(moves)
    return {f"{old} → {new}": count for (old, new), count in sorted(moves.items())}


def _apply_source(doc, source: SourceFile) -> None:
    """What the source says of a document wins over what its file says; its collection is the source's."""
    meta = source.meta
    doc.collection = (meta.collection if meta else None) or source.collection
    if meta is None:
        return
    if meta.url and meta.link != "template":  # a template is filled per passage
        doc.url = meta.url
    if meta.title and meta.title != doc.title:  # the heading the file opened with is not a section of it
        doc.title_heading, doc.title = doc.title_heading or doc.title, meta.title
    doc.version = meta.version or doc.version
    if meta.date:
        doc.modified, doc.date_source = meta.date[:10], "source"
    if meta.access is not None:
        doc.access = merge_access(tuple(i.lower() for i in meta.access)) if meta.access else ()
    doc.headings = tuple(h for h in meta.headings if h)


def _anchored(chunks: list[Chunk], source: SourceFile, raw: bytes | None) -> list[Chunk]:
    """Each passage's footnote link: the place in its document it quotes (its lines in a text file on a git
    web view, its heading on a wiki page, its words on a web page, its page in a PDF)."""
    from rag.index.anchors import line_ranges, passage_url

    meta = source.meta
    lines: list[tuple[int, int] | None] = [None] * len(chunks)
    if meta.link == "lines" and raw is not None:
        lines = line_ranges(raw.decode("utf-8", "replace"), [c.text for c in chunks])
    path = source.rel.split("/", 1)[1]
    return [replace(c, url=passage_url(meta.url, meta.link, c, path=path, lines=at, ancestors=len(meta.headings)))
            for c, at in zip(chunks, lines)]


def _discover_sources(
    declared: list[SourceRoot], prev_manifest: Manifest | None, prev_by_file: dict[str, list[Chunk]],
) -> tuple[list[SourceFile], dict[str, str], list[_FileResult]]:
    """The files of each declared source, named `<source>/<path in its folder>`, and the documents of the
    sources reused as the live index has them (their folders are not read)."""
    found: list[SourceFile] = []
    passed: dict[str, str] = {}
    carried: list[_FileResult] = []
    for root in declared:
        prefix = root.name + "/"
        if root.reuse and prev_manifest is not None:
            owned = {name: rec for name, rec in prev_manifest.files.items() if rec.source == root.name}
            if owned and all(name in prev_by_file for name in owned):
                for name, record in owned.items():
                    chunks = prev_by_file[name]
                    record = replace(record, languages=_languages(chunks))
                    carried.append(_FileResult(SourceFile(Path(root.path, name[len(prefix):]), name, root.name,
                                                          root.collection), record.hash, chunks, record))
                continue
        if not root.path.is_dir():
            passed[prefix] = f"the folder of source {root.name} is missing; nothing of it is indexed"
            continue
        files, skipped = discover([root.path], list(root.exclude))
        linked = DocumentMeta(url=root.url_template, link="template") if root.url_template else None
        listed = root.type != "folder"  # every other source lists each document it fetched
        for file in files:
            if listed and file.rel not in root.documents:
                # written by a fetch that did not finish (a wiki's page bodies, then a 403): not published,
                # and without the source's word on who may read it, it would be read as everyone's
                continue
            meta = root.documents.get(file.rel, linked)
            found.append(SourceFile(file.path, prefix + file.rel, root.name, root.collection, meta))
        passed.update({prefix + name: why for name, why in skipped.items()})
    return found, passed, carried


def _declared(declared: list[SourceRoot] | None) -> dict[str, dict[str, str]]:
    """The manifest's record of the declared sources ({} for a plain `index` run)."""
    if declared is None:
        return {}
    return {root.name: {"type": root.type, "collection": root.collection, "root": str(root.path)} for root in declared}


def _refuse_mass_delete(removed: list[str], prev_manifest: Manifest | None) -> None:
    """More than half of a source's documents leaving the index at once is refused (a source no longer
    declared loses all of them; so do the folders an earlier `index PATH` indexed, when sources take over)."""
    if prev_manifest is None or not removed:
        return
    totals: dict[str, int] = {}
    for record in prev_manifest.files.values():
        totals[record.source] = totals.get(record.source, 0) + 1
    leaving: dict[str, int] = {}
    for name in removed:
        source = prev_manifest.files[name].source
        leaving[source] = leaving.get(source, 0) + 1
    for source, count in sorted(leaving.items()):
        if not source:  # sources taking over from `index PATH`: any document no source keeps would go
            raise MassDeleteRefused(INDEXED_FOLDERS, count, totals[source], ADOPT)
        if count * 2 > totals[source]:
            raise MassDeleteRefused(source, count, totals[source])
