"""/reindex: one rebuild at a time in a worker thread, with a progress message kept up to date; the last
run's report (or failure) and who started it are kept for the admins' Home tab."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from rag.index.builder import EmptyIndexError, IndexProgress, IndexReport
from rag.index.snapshot import IndexBusyError

_log = logging.getLogger(__name__)


class ReindexBusy(RuntimeError):
    pass


class NoDocumentFolders(RuntimeError):
    """There is no index to refresh and no folder configured to build one from."""


def failure_text(exc: BaseException) -> str:
    """What the admin is told when a reindex fails: a short reason; the details go to the log."""
    if isinstance(exc, EmptyIndexError):
        reason = "no documents that could be indexed were found under the configured folders"
    elif isinstance(exc, NoDocumentFolders):
        reason = ("no document folders are configured (set AIE_DOCS_PATHS, or run `ai-employee index PATH` "
                  "once)")
    elif isinstance(exc, (IndexBusyError, ReindexBusy)):
        reason = "another reindex is running; try again when it has finished"
    else:
        reason = "something unexpected went wrong (the details are in the bot's log)"
    return f":x: Reindex failed — the previous index is still serving. Reason: {reason}."


def progress_text(event: IndexProgress | None, started: float) -> str:
    elapsed = time.monotonic() - started
    if event is None:
        return f":hourglass_flowing_sand: Reindexing: looking for documents… ({elapsed:.0f} s)"
    if event.stage == "parse":
        what = f"files {event.done}/{event.total}"
    elif event.stage == "embed":
        what = f"embedding new passages {event.done}/{event.total}"
    else:
        what = "building the search index"
    return f":hourglass_flowing_sand: Reindexing: {what} ({elapsed:.0f} s). Answers keep coming from the current index."


def report_text(report: IndexReport, limit: int = 15) -> str:
    if report.up_to_date:
        return f":white_check_mark: The knowledge base is already up to date ({report.chunks} passages, version `{report.version}`)."
    lines = [
        f":white_check_mark: Reindex finished in {report.seconds:.0f} s — now serving version `{report.version}` "
        f"({report.indexed} files, {report.chunks} passages).",
        f"Added {len(report.added)} · changed {len(report.changed)} · removed {len(report.removed)} · "
        f"unchanged {report.unchanged} · skipped {len(report.skipped)}",
    ]
    for title, names in (("Added", report.added), ("Changed", report.changed), ("Removed", report.removed)):
        if names:
            shown = ", ".join(f"`{n}`" for n in names[:limit])
            more = f" and {len(names) - limit} more" if len(names) > limit else ""
            lines.append(f"*{title}:* {shown}{more}")
    if report.skipped:
        lines.append("*Skipped:*")
        for name, reason in list(sorted(report.skipped.items()))[:limit]:
            lines.append(f"• `{name}` — {reason}")
        if len(report.skipped) > limit:
            lines.append(f"• … and {len(report.skipped) - limit} more")
    if report.rebuild_reason:
        lines.append(f"_Full rebuild: {report.rebuild_reason}_")
    return "\n".join(lines)


@dataclass(frozen=True)
class ReindexRun:
    """A reindex of this process: who started it and when; for a finished one, how it ended."""

    by: str | None  # Slack user id
    started: float  # epoch seconds
    finished: float | None = None
    ok: bool = False
    text: str = ""  # the report (or the failure) as the admin was told


class Reindexer:
    """`refresh(progress)` rebuilds the index from its folders (blocking); `warm()` loads the new snapshot."""

    def __init__(
        self,
        refresh: Callable[[Callable[[IndexProgress], None]], IndexReport],
        warm: Callable[[], object],
        update_every: float = 2.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.refresh = refresh
        self.warm = warm
        self.update_every = update_every
        self._clock = clock
        self._running = asyncio.Lock()
        self.current: ReindexRun | None = None  # the run in progress
        self.last: ReindexRun | None = None  # the last finished run (in this process)

    @property
    def running(self) -> bool:
        return self._running.locked()

    async def run(self, show: Callable[[str], Awaitable[None]], by: str | None = None) -> IndexReport:
        """Rebuild from the indexed folders; `show` receives progress texts, at most every `update_every` s."""
        if self._running.locked():
            raise ReindexBusy("a reindex is already running")
        async with self._running:
            self.current = ReindexRun(by, self._clock())
            try:
                report = await self._run(show)
            except Exception as exc:
                self._finish(False, failure_text(exc))
                raise
            except BaseException:  # cancelled: no report, nothing to keep
                self.current = None
                raise
            self._finish(True, report_text(report))
            return report

    def _finish(self, ok: bool, text: str) -> None:
        run, self.current = self.current, None
        if run is not None:
            self.last = ReindexRun(run.by, run.started, self._clock(), ok, text)

    async def _run(self, show: Callable[[str], Awaitable[None]]) -> IndexReport:
        started = time.monotonic()
        latest: list[IndexProgress | None] = [None]

        def record(event: IndexProgress) -> None:  # called from the indexing thread
            latest[0] = event

        task = asyncio.create_task(asyncio.to_thread(self.refresh, record))
        shown = None
        while not task.done():
            text = progress_text(latest[0], started)
            if text != shown:
                await _quietly(show(text))
                shown = text
            await asyncio.wait({task}, timeout=self.update_every)
        report = task.result()
        # Load the new snapshot off the event loop so the next question does not wait for it.
        await asyncio.to_thread(self.warm)
        return report


async def _quietly(update: Awaitable[None]) -> None:
    try:
        await update
    except Exception as exc:  # noqa: BLE001 - a lost progress update must not stop the reindex
        _log.warning("progress update failed: %s", exc)
