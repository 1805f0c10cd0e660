"""Reindexing from a chat: one rebuild at a time (across every chat platform) in a worker thread, with a
progress message kept up to date and a report at the end; the last run and who started it are kept for
the admins. With declared sources, one admin's sync at a time, while the schedule's syncs run beside it
(each source's own lock keeps two runs from syncing one source). Texts come in each platform's markup
through a `TextStyle`."""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from bot.core.logs import described
from rag.index.builder import CollectionsRenamed, EmptyIndexError, IndexProgress, IndexReport, MassDeleteRefused
from rag.index.snapshot import IndexBusyError, IndexLockLost

if TYPE_CHECKING:
    from bot.core.sources import SyncRequest
    from rag.sources.sync import SyncReport

_log = logging.getLogger(__name__)
BUSY = "A reindex is already running — its progress message is in the conversation where it was started."
STARTED = "Reindexing the knowledge base… I'll post progress here."


def not_admin(command: str) -> str:
    """Who is told no when they ask for a reindex; `command`: the surface's reindex command, as code."""
    return f"Sorry, only knowledge-base admins can run {command}. Ask one of them if documents look out of date."


_UNSAFE_IN_CODE = re.compile(r"[`\x00-\x1f\x7f\u2028\u2029]")
NAME_CHARS = 120  # a longer file name is shown cut in the middle
REPORT_CHARS = 3900  # what a report may take: Slack's chat.update takes 4,000 characters of text


def code_span(text: str) -> str:
    """`text` as inline code that nothing in it can end: backticks become look-alikes (ˋ), line breaks and
    control characters spaces. (Mention and link syntax is the platform's `escape`'s job.)"""
    return "`" + _UNSAFE_IN_CODE.sub(lambda m: "ˋ" if m.group() == "`" else " ", text) + "`"


def shortened(name: str, limit: int = NAME_CHARS) -> str:
    """A long file name cut in the middle, so that its folder and its extension both stay readable."""
    if len(name) <= limit:
        return name
    keep = limit - 1
    return name[: keep - keep // 3] + "…" + name[len(name) - keep // 3 :]


@dataclass(frozen=True)
class TextStyle:
    """A chat platform's markup for the reindex texts."""

    working: str  # icons
    done: str
    failed: str
    bold: str = "*"  # wraps bold text
    italic: str = "_"
    escape: Callable[[str], str] = str  # other text made inert for the platform (no mention, no link)
    command: str = "/reindex"  # how an admin runs a reindex there

    def name(self, name: str) -> str:
        """A file name as inline code, escaped: it can neither format, mention nor link."""
        return self.escape(code_span(shortened(name)))


class ReindexBusy(RuntimeError):
    pass


class NoDocumentFolders(RuntimeError):
    """There is no index to refresh and no folder configured to build one from."""


def failure_reason(exc: BaseException) -> str:
    """Why a reindex failed, short and without paths or exception text (the details go to the log)."""
    if isinstance(exc, EmptyIndexError):
        return "no documents that could be indexed were found under the configured folders"
    if isinstance(exc, NoDocumentFolders):
        return "no document folders are configured (set AIE_DOCS_PATHS, or run `ai-employee index PATH` once)"
    if isinstance(exc, IndexLockLost):
        return ("the reindex lock was lost before the new index was published (Redis was unreachable too long, "
                "or another reindex took over); nothing was published")
    if isinstance(exc, IndexBusyError) and exc.holder:
        return f"another reindex is running (started by {exc.holder}); try again when it has finished"
    if isinstance(exc, (IndexBusyError, ReindexBusy)):
        return "another reindex is running; try again when it has finished"
    if isinstance(exc, MassDeleteRefused):
        return (f"the sync of {exc.source} would remove {exc.removing} of its {exc.total} documents, so nothing "
                f"was published; to allow it: `/reindex {exc.source} allow-mass-delete`")
    if isinstance(exc, CollectionsRenamed):
        # counted, not named: the report may be read where not every collection may be
        return (f"the reindex would move {sum(exc.moves.values())} documents to another collection, so nothing "
                "was published; `ai-employee index` says which, and `--rename-collections` allows it")
    return "something unexpected went wrong (the details are in the bot's log)"


def failure_text(reason: str, style: TextStyle) -> str:
    return f"{style.failed} Reindex failed — the previous index is still serving. Reason: {reason}."


def progress_text(event: IndexProgress | None, started: float, style: TextStyle) -> str:
    elapsed = time.monotonic() - started
    if event is None:
        return f"{style.working} Reindexing: looking for documents… ({elapsed:.0f} s)"
    if event.stage == "parse":
        what = f"files {event.done}/{event.total}"
    elif event.stage == "embed":
        what = f"embedding new passages {event.done}/{event.total}"
    elif event.stage == "fetch":  # the source's name alone: its detail may name a document (a wiki page's
        # attachment, a crawled URL) that not everyone where the reindex was asked for may read
        source = style.escape(event.source) if event.source else "the sources"
        what = f"fetching {source} ({event.done}/{event.total})"
    else:
        what = "building the search index"
    return f"{style.working} Reindexing: {what} ({elapsed:.0f} s). Answers keep coming from the current index."


Visible = Callable[[str], bool]  # whether a file's name may be shown where the report goes
OUTSIDE = "outside this conversation's scope"


def report_text(report: IndexReport, style: TextStyle, limit: int = 15, visible: Visible | None = None,
                max_chars: int = REPORT_CHARS) -> str:
    """The report; with `visible`, the names of files it rejects are only counted (the totals stay whole).
    At most `limit` names a list, fewer when the report would exceed `max_chars`: the rest are counted."""
    if report.up_to_date:
        return (f"{style.done} The knowledge base is already up to date ({report.chunks} passages, "
                f"version `{report.version}`).")
    for shown in range(limit, -1, -1):
        text = _report_text(report, style, shown, visible)
        if len(text) <= max_chars:
            return text
    return text[: max_chars - 1] + "…"  # counts alone do not fit: not with a sane max_chars


def _report_text(report: IndexReport, style: TextStyle, limit: int, visible: Visible | None) -> str:
    b, i = style.bold, style.italic
    lines = [
        f"{style.done} Reindex finished in {report.seconds:.0f} s — now serving version `{report.version}` "
        f"({report.indexed} files, {report.chunks} passages).",
        f"Added {len(report.added)} · changed {len(report.changed)} · removed {len(report.removed)} · "
        f"unchanged {report.unchanged} · skipped {len(report.skipped)}",
    ]
    for title, names in (("Added", report.added), ("Changed", report.changed), ("Removed", report.removed)):
        if names:
            listed, hidden = _visible(names, visible)
            parts = [", ".join(style.name(n) for n in listed[:limit])] if listed[:limit] else []
            if len(listed) > limit:
                parts.append(f"{len(listed) - limit} more" if limit else _files(len(listed)))
            if hidden:
                parts.append(f"{hidden} more {OUTSIDE}" if listed else f"{hidden} {OUTSIDE}")
            lines.append(f"{b}{title}:{b} " + " and ".join(parts))
    if report.skipped:
        listed, hidden = _visible(sorted(report.skipped), visible)
        lines.append(f"{b}Skipped:{b}")
        for name in listed[:limit]:
            lines.append(f"• {style.name(name)} — {style.escape(report.skipped[name])}")
        if len(listed) > limit:
            lines.append(f"• … and {len(listed) - limit} more" if limit else f"• {_files(len(listed))}")
        if hidden:
            lines.append(f"• {'… and ' if listed else ''}{hidden}{' more' if listed else ''} {OUTSIDE}")
    if report.rebuild_reason:
        lines.append(f"{i}Full rebuild: {style.escape(report.rebuild_reason)}{i}")
    return "\n".join(lines)


def _files(count: int) -> str:
    return f"{count} file" if count == 1 else f"{count} files"


def _visible(names: list[str], visible: Visible | None) -> tuple[list[str], int]:
    """The names that may be listed, and how many may not."""
    if visible is None:
        return list(names), 0
    listed = [n for n in names if visible(n)]
    return listed, len(names) - len(listed)


@dataclass(frozen=True)
class ReindexRun:
    """A reindex of this process: who started it and when; for a finished one, how it ended."""

    by: str | None  # the admin's user id on their platform
    started: float  # epoch seconds
    finished: float | None = None
    report: IndexReport | None = None  # when it succeeded
    reason: str = ""  # why it failed (short, safe to show)
    platform: str = "slack"
    synced: SyncReport | None = None  # a sync of the declared sources (`report` is its index's)

    @property
    def ok(self) -> bool:
        return self.synced.ok if self.synced is not None else self.report is not None


def result_text(result: IndexReport | SyncReport, style: TextStyle, visible: Visible | None = None,
                max_chars: int = REPORT_CHARS) -> str:
    """The report of a reindex or of a sync of the declared sources."""
    if isinstance(result, IndexReport):
        return report_text(result, style, visible=visible, max_chars=max_chars)
    from bot.core.sources import sync_text  # it renders the index's report with this module's helpers

    return sync_text(result, style, visible=visible, max_chars=max_chars)


def run_text(run: ReindexRun, style: TextStyle, max_chars: int = REPORT_CHARS) -> str:
    """A finished run's report, or its failure, as the admin was told."""
    if run.synced is not None:
        return result_text(run.synced, style, max_chars=max_chars)
    if run.report is None:
        return failure_text(run.reason, style)
    return report_text(run.report, style, max_chars=max_chars)


_THIS_RUN: ContextVar[ReindexRun | None] = ContextVar("reindex_run", default=None)


class Reindexer:
    """`refresh(progress)` rebuilds the index from its folders (blocking); `warm()` loads the new snapshot.
    With declared sources, `sync(request, progress)` syncs them instead (every run, all when not told which).
    A rebuild runs alone; a sync started by an admin runs alone among the admins', beside the schedule's."""

    def __init__(
        self,
        refresh: Callable[[Callable[[IndexProgress], None]], IndexReport],
        warm: Callable[[], object],
        update_every: float = 2.0,
        clock: Callable[[], float] = time.time,
        finished: Callable[[ReindexRun], None] | None = None,
        sync: Callable[[SyncRequest | None, Callable[[IndexProgress], None]], SyncReport] | None = None,
    ) -> None:
        self.refresh = refresh
        self.sync = sync
        self.warm = warm
        self.finished = finished  # told of every finished run (e.g. to measure it)
        self.update_every = update_every
        self._clock = clock
        self._runs: list[ReindexRun] = []  # in progress, in the order they started
        self.last: ReindexRun | None = None  # the last finished run (in this process)

    @property
    def running(self) -> bool:
        """Whether any run is in progress (the schedule's included)."""
        return bool(self._runs)

    @property
    def busy(self) -> bool:
        """Whether an admin's reindex would be refused now: an admin's is running (a rebuild: any is)."""
        return any(self._alone(run) for run in self._runs)

    @property
    def current(self) -> ReindexRun | None:
        """The caller's own run, asked from within it (its worker thread); else the run that keeps another
        admin's from starting, if any."""
        return _THIS_RUN.get() or next((run for run in reversed(self._runs) if self._alone(run)), None)

    def _alone(self, run: ReindexRun) -> bool:
        return self.sync is None or run.by is not None

    async def run(self, show: Callable[[str], Awaitable[None]], style: TextStyle, by: str | None = None,
                  platform: str = "slack", request: SyncRequest | None = None) -> IndexReport | SyncReport:
        """Rebuild from the indexed folders (or sync the sources `request` names: all when None); `show`
        receives progress texts, at most every `update_every` s."""
        run = ReindexRun(by, self._clock(), platform=platform)
        if self.busy and self._alone(run):
            raise ReindexBusy("a reindex is already running")
        self._runs.append(run)
        mine = _THIS_RUN.set(run)  # the worker thread's context is a copy: it knows its run
        try:
            report = await self._run(show, style, request)
        except Exception as exc:  # the schedule finding another replica at work keeps nothing
            if isinstance(exc, MassDeleteRefused):  # a source no longer declared, the `index PATH` folders
                _log.warning("sync held back: %s", exc)
            if by is not None or not isinstance(exc, (IndexBusyError, IndexLockLost)):
                self._finish(run, None, failure_reason(exc))
            raise
        finally:  # cancelled: no report, nothing to keep
            self._runs.remove(run)
            _THIS_RUN.reset(mine)
        self._finish(run, report, "")
        return report

    def _finish(self, run: ReindexRun, result: IndexReport | SyncReport | None, reason: str) -> None:
        synced = None if result is None or isinstance(result, IndexReport) else result
        report = synced.index if synced is not None else result
        self.last = ReindexRun(run.by, run.started, self._clock(), report, reason, run.platform, synced)
        if result is not None:
            _log_result(result, run.by, run.platform)
        if self.finished is not None:
            self.finished(self.last)

    async def _run(self, show: Callable[[str], Awaitable[None]], style: TextStyle,
                   request: SyncRequest | None) -> IndexReport | SyncReport:
        started = time.monotonic()
        latest: list[IndexProgress | None] = [None]

        def record(event: IndexProgress) -> None:  # called from the indexing thread
            latest[0] = event

        work = (lambda: self.refresh(record)) if self.sync is None else (lambda: self.sync(request, record))
        task = asyncio.create_task(asyncio.to_thread(work))
        shown = None
        while not task.done():
            text = progress_text(latest[0], started, style)
            if text != shown:
                await _quietly(show(text))
                shown = text
            await asyncio.wait({task}, timeout=self.update_every)
        report = task.result()
        # Load the new snapshot off the event loop so the next question does not wait for it.
        await asyncio.to_thread(self.warm)
        return report


def _log_result(result: IndexReport | SyncReport, by: str | None, platform: str) -> None:
    """What `serve`'s log says of a finished reindex: one line a source synced, held back or failed (bot.core
    .sources), or one for a reindex of the indexed folders."""
    asked = f" (asked by {by} on {platform})" if by else ""
    if not isinstance(result, IndexReport):
        from bot.core.sources import sync_log

        for level, line in sync_log(result):
            _log.log(level, "%s%s", line, asked)
    elif result.up_to_date:
        _log.info("reindex: already up to date (version %s)%s", result.version, asked)
    else:
        _log.info("reindex: added %d, changed %d, removed %d, skipped %d in %.1f s (version %s)%s",
                  len(result.added), len(result.changed), len(result.removed), len(result.skipped),
                  result.seconds, result.version, asked)


async def _quietly(update: Awaitable[None]) -> None:
    try:
        await update
    except Exception as exc:  # noqa: BLE001 - a lost progress update must not stop the reindex
        _log.warning("progress update failed: %s", exc)


async def _judge(visible: Callable[[], Awaitable[Visible]] | None) -> Visible | None:
    if visible is None:
        return None
    try:
        return await visible()
    except Exception:  # noqa: BLE001 - the reindex went well; without knowing who reads, name no file
        _log.exception("could not tell which files the reindex report may name")
        return lambda _name: False


@dataclass(frozen=True)
class ReindexOutcome:
    text: str  # what the admin was (or should have been) told last
    ok: bool = False
    busy: bool = False  # another reindex was running: nothing was done
    told: bool = True  # False: the final text could not be put in the progress message


class ProgressMessage(Protocol):
    """One message in the conversation, posted on the first `show` and updated in place after that."""

    async def show(self, text: str) -> None: ...


async def run_reindex(reindexer: Reindexer, message: ProgressMessage, style: TextStyle, *, by: str,
                      platform: str, visible: Callable[[], Awaitable[Visible]] | None = None,
                      request: SyncRequest | None = None) -> ReindexOutcome:
    """Run a reindex (with declared sources: a sync of those `request` names) with its progress and report in
    `message`; a failure is reported, not raised. `visible` is asked after the reindex (so it judges by the
    new index) which files the report may name where `message` is read; None: every file."""
    try:
        result = await reindexer.run(message.show, style, by=by, platform=platform, request=request)
        ok = reindexer.last.ok if reindexer.last is not None else True
        outcome = ReindexOutcome(result_text(result, style, visible=await _judge(visible)), ok=ok)
    except ReindexBusy:
        return ReindexOutcome(BUSY, busy=True, told=False)
    except MassDeleteRefused as exc:  # every source synced would lose too much: the admin decides
        from bot.core.sources import held_back_text

        outcome = ReindexOutcome(f"{style.failed} Sync held back — the previous index is still serving: "
                                 f"{held_back_text(exc, style)}")
    except (IndexBusyError, IndexLockLost) as exc:  # another process (e.g. a replica) is reindexing: no traceback
        _log.warning("reindex not started: %s", exc)
        outcome = ReindexOutcome(failure_text(failure_reason(exc), style))
    except Exception as exc:  # noqa: BLE001 - the old index keeps serving; the admin gets a short reason
        _log.exception("reindex failed")
        outcome = ReindexOutcome(failure_text(failure_reason(exc), style))
    try:
        await message.show(outcome.text)
    except Exception as exc:  # noqa: BLE001 - e.g. the bot may not post there: the adapter tells the admin otherwise
        _log.error("could not tell the admin how the reindex went: %s", described(exc))
        return ReindexOutcome(outcome.text, outcome.ok, told=False)
    return outcome
