"""Syncing the declared sources: each connector brings its folder up to date, then one index build takes
every source in and publishes a new version.

A source whose fetch failed keeps its documents as the live index has them (nothing is deleted on a
failed or partial listing); a source that would lose more than half of its documents is held back the same
way until an admin allows it, so the other sources' changes still publish.

A source is synced by one run at a time (its own lock in the data dir: a sync someone asked for waits up to
half a minute for the running one to finish, the schedule's leaves the source to it); syncs of other sources
go on meanwhile. The index lock (across replicas when Redis is configured) is held only to publish, never
while a source is fetched or its files are parsed.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Mapping
from contextlib import ExitStack
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from rag.index.builder import EmptyIndexError, IndexProgress, IndexReport, MassDeleteRefused, SourceRoot
from rag.index.snapshot import IndexLockLost, Manifest
from rag.index.metadata import DocumentMeta
from rag.sources.base import CheckReport, Connector, Fetched, SourceError
from rag.sources.config import FolderSource, GitSource, WebSource, ConfluenceSource
from rag.sources.readers import ReaderResolver, chat_ids_only, unresolved
from rag.sources.state import SourceBusy, SourceState, StateStore

if TYPE_CHECKING:
    from rag.sources.web import WebLimits

_log = logging.getLogger(__name__)
Spec = FolderSource | GitSource | WebSource | ConfluenceSource
UNEXPECTED = "something unexpected went wrong (the details are in the bot's log)"
ASKED_WAIT = 30.0  # seconds a sync someone asked for waits, in all, for other runs' syncs of its sources to end


def make_connector(spec: Spec, workdir: Path, web: WebLimits | None = None) -> Connector:
    """The connector of a source's type (imported only when a source of that type is declared); `workdir`
    is the folder it keeps between runs, `web` what a web source's crawl may spend (the defaults: None)."""
    if isinstance(spec, FolderSource):
        from rag.sources.folder import FolderConnector

        return FolderConnector(spec)
    if isinstance(spec, GitSource):
        from rag.sources.git import GitConnector

        return GitConnector(spec, workdir=workdir)
    if isinstance(spec, WebSource):
        from rag.sources.web import WebConnector, WebLimits

        return WebConnector(spec, limits=web or WebLimits())
    from rag.sources.confluence import ConfluenceConnector

    return ConfluenceConnector(spec)


@dataclass
class SourceOutcome:
    """How one source's part of a sync went."""

    name: str
    ok: bool
    error: str = ""  # safe to show
    variable: str | None = None
    fetched: Fetched | None = None
    held_back: MassDeleteRefused | None = None  # fetched, but not published: it would remove too much
    seconds: float = 0.0
    # Its readers could not be looked up, yet these documents, everyone's at the last good sync, are
    # restricted at the source now: the source is published all the same, with its last good readers
    # but these documents' fail closed
    restricted: tuple[str, ...] = ()
    busy: bool = False  # another run is syncing it: this one left it alone (nothing of it recorded)

    @property
    def publish(self) -> bool:
        return self.ok or bool(self.restricted)


@dataclass
class SyncReport:
    sources: dict[str, SourceOutcome] = field(default_factory=dict)
    index: IndexReport | None = None  # None: nothing was built (every fetch failed)

    @property
    def ok(self) -> bool:
        return all(o.ok for o in self.sources.values())


class UnknownSource(ValueError):
    pass


class SourceSync:
    """`sync(names)` runs the named sources (all when none) through fetch and one build.

    `build(roots, progress, allow_mass_delete)` is IndexBuilder.build_sources (which takes the index lock to
    publish); `manifest()` reads the live index's manifest. `readers` turns the access lists sources give by
    email and group name into chat ids; None (no chat surface configured) drops those entries, so such a
    document is served to nobody."""

    def __init__(self, specs: list[Spec], states: StateStore, build: Callable[..., IndexReport],
                 manifest: Callable[[], Manifest | None], connector: Callable[[Spec, Path], Connector] = make_connector,
                 clock: Callable[[], float] = time.time, readers: ReaderResolver | None = None) -> None:
        self.specs = {spec.name: spec for spec in specs}
        self.states = states
        self._build, self._manifest = build, manifest
        self._connector = connector
        self._clock = clock
        self._readers = readers

    def sync(self, names: Iterable[str] | None = None, *, allow_mass_delete: bool = False, by: str = "",
             progress: Callable[[IndexProgress], None] | None = None) -> SyncReport:
        picked = chosen(self.specs, names)
        progress = progress or (lambda _: None)
        report = SyncReport()
        with ExitStack() as claimed:
            until = time.monotonic() + (ASKED_WAIT if by else 0.0)
            mine = {spec.name for spec in sorted(picked, key=lambda spec: spec.name)  # one order for every run
                    if self._claim(spec.name, until, claimed, report, progress)}
            states = {name: self.states.load(name) for name in mine}
            for i, spec in enumerate(spec for spec in picked if spec.name in mine):
                progress(IndexProgress("fetch", i, len(mine), spec.name, spec.name))
                report.sources[spec.name] = self._fetch(spec, states[spec.name], progress)
            progress(IndexProgress("fetch", len(mine), len(mine)))
            fetched = {name for name, outcome in report.sources.items() if outcome.publish}
            if fetched:
                try:
                    report.index = self._publish(fetched, report, allow_mass_delete, progress)
                except Exception as exc:  # raised to the caller, and kept as each fetched source's last error
                    _not_published(report, fetched, exc)
                    self._record(report, states, by)
                    raise
            self._record(report, states, by)
        report.sources = {spec.name: report.sources[spec.name] for spec in picked}  # in the order asked
        return report

    def _claim(self, name: str, until: float, claimed: ExitStack, report: SyncReport,
               progress: Callable[[IndexProgress], None]) -> bool:
        """Take the source's own lock for this run, waiting until `until` (monotonic) for another run to let it
        go (False, and the report says so, when it does not)."""
        for patience in dict.fromkeys((0.0, max(0.0, until - time.monotonic()))):
            if patience:
                progress(IndexProgress("fetch", 0, 1, f"{name}: waiting for another sync of it to finish", name))
            try:
                claimed.enter_context(self.states.sync_lock(name, patience))
                return True
            except SourceBusy:
                continue
        report.sources[name] = SourceOutcome(name, False, f"a sync of {name} is already running; it publishes "
                                             "what it fetches when it is done", busy=True)
        return False

    def _fetch(self, spec: Spec, state: SourceState, progress: Callable[[IndexProgress], None]) -> SourceOutcome:
        began = self._clock()
        state.status.last_attempt = began

        def told(done: int, total: int, what: str) -> None:
            detail = f"{spec.name}: {what}" if what else spec.name
            progress(IndexProgress("fetch", done, total, detail, spec.name))

        try:
            workdir = self.states.workdir(spec.name)
            fetched = self._connector(spec, workdir).fetch(workdir, dict(state.connector), told)
        except SourceError as exc:
            state.status.retry_after = exc.retry_after
            return SourceOutcome(spec.name, False, str(exc), exc.variable, seconds=self._clock() - began)
        except Exception:  # noqa: BLE001 - one broken source never stops the others
            _log.exception("the sync of source %s failed", spec.name)
            return SourceOutcome(spec.name, False, UNEXPECTED, seconds=self._clock() - began)
        failed, restricted = None, ()
        try:
            fetched.documents = self._readable(spec.name, fetched.documents)
        except SourceError as exc:  # the live index keeps its last good documents; the folder's fail closed
            failed, before = exc, state.metadata()
            restricted = tuple(sorted(name for name, meta in fetched.documents.items()
                                      if meta.access is not None and before.get(name, meta).access is None))
            fetched.documents = (_last_good(before, fetched.documents, restricted) if restricted
                                 else unresolved(fetched.documents))
        # The folder now holds what was fetched: what the next fetch starts from, whatever the build does.
        state.connector, state.root = fetched.state, str(fetched.root)
        state.documents = {name: meta.to_dict() for name, meta in fetched.documents.items()}
        state.status.calls = fetched.calls
        if failed is not None:
            state.status.retry_after = failed.retry_after
        self.states.save(spec.name, state)
        if failed is not None:
            took = self._clock() - began
            return SourceOutcome(spec.name, False, str(failed), failed.variable, seconds=took,
                                 restricted=restricted)
        return SourceOutcome(spec.name, True, fetched=fetched, seconds=self._clock() - began)

    def _readable(self, source: str, documents: dict[str, DocumentMeta]) -> dict[str, DocumentMeta]:
        """The documents with access lists in chat ids (SourceError when a lookup failed)."""
        if self._readers is None:
            return unresolved(documents)
        return self._readers.resolve(source, documents)

    def _roots(self, fresh: set[str]) -> list[SourceRoot]:
        """Every declared source as it is now (read when the build asks: another run may have synced one)."""
        roots = []
        for name, spec in self.specs.items():
            state = self.states.load(name)
            if not state.root:
                continue  # never fetched: nothing of it to index yet
            folder = isinstance(spec, FolderSource)
            roots.append(SourceRoot(name, Path(state.root), spec.collection, spec.type, state.metadata(),
                                    tuple(spec.exclude) if folder else (), reuse=name not in fresh,
                                    url_template=spec.url if folder else None))
        return roots

    def _publish(self, fresh: set[str], report: SyncReport, allow_mass_delete: bool,
                 progress: Callable[[IndexProgress], None]) -> IndexReport | None:
        """Build with the fresh sources; one that would lose too much is held back and the rest published
        (None: every fresh source was held back, nothing was built)."""
        fresh = set(fresh)
        while True:
            try:
                return self._build(lambda: self._roots(fresh), progress, allow_mass_delete=allow_mass_delete)
            except MassDeleteRefused as refused:
                outcome = report.sources.get(refused.source)
                if outcome is None or refused.source not in fresh:  # a source no longer declared
                    raise
                outcome.ok, outcome.held_back = False, refused
                outcome.error = (f"{refused}, or in chat with the word allow-mass-delete after the reindex command "
                                 f"and {refused.source}")
                fresh.discard(refused.source)
                if not fresh:
                    return None  # nothing left to publish: the held-back sources are recorded as failed

    def _record(self, report: SyncReport, states: dict[str, SourceState], by: str) -> None:
        manifest = self._manifest() if report.index is not None else None
        counts: dict[str, int] = {}
        for record in (manifest.files.values() if manifest else ()):
            counts[record.source] = counts.get(record.source, 0) + 1
        for name, outcome in report.sources.items():
            if outcome.busy:
                continue  # the run syncing it records it
            status = states[name].status
            if by:  # the schedule's syncs keep who synced it last: the admin to tell of a failure
                status.by = by
            if outcome.ok:
                status.last_success, status.last_seconds = self._clock(), round(outcome.seconds, 3)
                status.last_error, status.error_variable, status.failures, status.told = "", None, 0, False
                status.retry_after = None
            else:
                if outcome.error != status.last_error:
                    status.told = False  # a new problem is told anew
                status.last_error, status.error_variable = outcome.error, outcome.variable
                status.failures += 1
            if manifest is not None:
                status.documents = counts.get(name, 0)
            self.states.save(name, states[name])


def chosen(specs: Mapping[str, Spec], names: Iterable[str] | None) -> list[Spec]:
    """The declared sources `names` names (every one when none); UnknownSource names what is not declared."""
    names = list(names or [])
    unknown = [n for n in names if n not in specs]
    if unknown:
        raise UnknownSource(f"no source named {', '.join(unknown)}; the sources are: {', '.join(specs) or 'none'}")
    return [specs[n] for n in names] if names else list(specs.values())


def check_sources(specs: list[Spec], states: StateStore, names: Iterable[str] | None = None,
                  connector: Callable[[Spec, Path], Connector] = make_connector) -> dict[str, CheckReport]:
    """Reach and authenticate each named source and count its documents; nothing is changed."""
    results = {}
    for spec in chosen({spec.name: spec for spec in specs}, names):
        try:
            results[spec.name] = connector(spec, states.workdir(spec.name)).check()
        except SourceError as exc:
            results[spec.name] = CheckReport(False, detail=str(exc))
        except Exception:  # noqa: BLE001
            _log.exception("checking source %s failed", spec.name)
            results[spec.name] = CheckReport(False, detail=UNEXPECTED)
    return results


def due_sources(specs: list[Spec], states: StateStore, now: float) -> list[str]:
    """The sources the schedule should sync at `now`."""
    due = []
    for spec in specs:
        at = states.load(spec.name).status.next_run(spec.every)
        if at is not None and at <= now:
            due.append(spec.name)
    return due


def _not_published(report: SyncReport, names: Iterable[str], exc: Exception) -> None:
    """The sources fetched for a build that failed: failed too, with why (what `sources list` shows)."""
    why = str(exc) if isinstance(exc, (MassDeleteRefused, EmptyIndexError, IndexLockLost)) else UNEXPECTED
    for name in names:
        outcome = report.sources[name]
        outcome.ok, outcome.error = False, f"fetched, but nothing was published: {why}"


def _last_good(before: Mapping[str, DocumentMeta], now: Mapping[str, DocumentMeta],
               restricted: Iterable[str]) -> dict[str, DocumentMeta]:
    """`now` with each document's readers as the last good sync resolved them, where it had them; a document
    new since, or `restricted` (everyone's then), with its readers' chat ids alone (fail closed)."""
    closed = set(restricted)
    return {name: replace(meta, access=before[name].access) if name in before and name not in closed
            else replace(meta, access=chat_ids_only(meta.access)) for name, meta in now.items()}
