"""The declared sources kept in sync by `serve` itself: each source on its interval (a failed one retried
sooner, backing off, as its state says), and a watched folder within seconds of a saved, added or deleted
file (changes batched by `watchfiles`). Each source is synced in a run of its own through the core's
Reindexer, so a slow one holds up no other; another replica holding the index lock, or another run syncing
the source, is not an error (it publishes, this one follows; a watched change is synced again after).
A scheduled sync's failure is told once, privately, to the admin who last synced that source."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from pathlib import Path

import watchfiles

from bot.core.logs import described
from bot.core.reindex import ReindexBusy, Reindexer, TextStyle
from bot.core.sources import SourceDesk, SyncRequest, Teller, failure_notice
from rag.index.builder import MassDeleteRefused
from rag.index.snapshot import IndexBusyError, IndexLockLost

_log = logging.getLogger(__name__)
SCHEDULE = "schedule"  # the platform a scheduled run is recorded under
_NOWHERE = TextStyle(working="", done="", failed="")


async def _unseen(_text: str) -> None:
    """A scheduled sync's progress is shown nowhere (the sources table and /metrics tell how it went)."""


class SyncScheduler:
    """`run()` until cancelled: every `tick` seconds (or at once after a watched change) it syncs what is due."""

    def __init__(self, desk: SourceDesk, reindexer: Reindexer, tellers: Mapping[str, Teller], tick: float = 5.0,
                 debounce_ms: int = 500) -> None:
        self.desk, self.reindexer, self.tellers = desk, reindexer, tellers
        self.tick, self.debounce_ms = tick, debounce_ms
        self._changed: set[str] = set()  # watched sources with changes not synced yet
        self._syncing: set[str] = set()  # sources the schedule is syncing now
        self._ticks: set[asyncio.Task] = set()
        self._wake = asyncio.Event()
        self._stop = asyncio.Event()

    async def run(self) -> None:
        watched = await asyncio.to_thread(self.desk.watched)
        self._changed |= set(await asyncio.to_thread(self.desk.never_synced, list(watched.values())))
        watcher = asyncio.create_task(self._watch(watched)) if watched else None
        try:
            while not self._stop.is_set():
                tick = asyncio.create_task(self.once())  # not waited for: a slow sync holds up no other
                self._ticks.add(tick)
                tick.add_done_callback(self._ticks.discard)
                try:
                    await asyncio.wait_for(self._wake.wait(), self.tick)
                except TimeoutError:
                    pass
                self._wake.clear()
        finally:
            self._stop.set()
            for task in [watcher, *self._ticks]:
                if task is not None:
                    task.cancel()

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()

    async def once(self) -> None:
        """Sync every source that is due or changed and not being synced by the schedule already, each in a run
        of its own; when they are done, tell the failures not told yet."""
        due = (set(await asyncio.to_thread(self.desk.due)) | self._changed) - self._syncing
        if not due:
            return
        changed = self._changed & due
        self._changed -= due
        self._syncing |= due
        await asyncio.gather(*(self._sync(name, name in changed) for name in sorted(due)))
        await self.tell()

    async def _sync(self, name: str, changed: bool) -> None:
        """One source's scheduled sync; a watched change another run kept it from is noted to sync again."""
        again = False
        try:
            report = await self.reindexer.run(_unseen, _NOWHERE, by=None, platform=SCHEDULE,
                                              request=SyncRequest((name,)))
        except (ReindexBusy, IndexBusyError, IndexLockLost) as exc:  # someone else syncs: they publish, we follow
            _log.debug("scheduled sync of %s skipped: %s", name, exc)
            again = True
        except MassDeleteRefused:
            pass  # logged by the Reindexer, as every held-back deletion is
        except Exception:  # noqa: BLE001 - the schedule keeps going; the next tick tries again
            _log.exception("the scheduled sync of %s failed", name)
        else:  # another run syncing it may have fetched it before the change
            again = any(outcome.busy for outcome in report.sources.values())
        finally:
            self._syncing.discard(name)
        if again and changed:
            self._changed.add(name)

    async def tell(self) -> None:
        for platform, user, row in await asyncio.to_thread(self.desk.untold):
            teller = self.tellers.get(platform)
            if teller is None:
                continue  # e.g. Teams without a conversation with that admin: it shows in the sources table
            if await teller.send(user, failure_notice(row, teller.style)):
                await asyncio.to_thread(self.desk.told, [row.name])

    async def _watch(self, watched: dict[Path, str]) -> None:
        """Note each change under a watched folder; watch again (the folders there now) if watching stops."""
        while not self._stop.is_set():
            folders = await asyncio.to_thread(_existing, watched)
            if folders:
                try:
                    async for changes in watchfiles.awatch(*folders, debounce=self.debounce_ms, step=50,
                                                           stop_event=self._stop):
                        self._note(changes, folders)
                except Exception as exc:  # noqa: BLE001 - e.g. a folder went away: its syncs report that
                    _log.warning("watching the folder sources stopped (%s); watching again shortly",
                                 described(exc))
            try:
                await asyncio.wait_for(self._stop.wait(), self.tick)
            except TimeoutError:
                pass

    def _note(self, changes: set[tuple[watchfiles.Change, str]], folders: dict[Path, str]) -> None:
        touched = {name for _, path in changes for folder, name in folders.items()
                   if Path(path).is_relative_to(folder)}  # the paths are under the resolved folders watched
        if touched:
            self._changed |= touched
            self._wake.set()


def _existing(watched: dict[Path, str]) -> dict[Path, str]:
    """The watched folders there now, resolved (as the watcher will name the changed paths)."""
    return {folder.resolve(): name for folder, name in watched.items() if folder.is_dir()}
