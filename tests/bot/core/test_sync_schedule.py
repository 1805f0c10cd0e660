"""The schedule's side of a sync: another replica holding the index lock is skipped quietly (nobody told,
nothing kept for the Home tab, the changed source tried again), and the words of a chat command."""

from __future__ import annotations

import asyncio
import logging

from bot.core.reindex import Reindexer
from bot.core.schedule import SyncScheduler
from bot.core.sources import SourceDesk, SyncRequest, Teller, parse_request
from bot.slack.blocks import SLACK_STYLE
from rag.index.snapshot import IndexBusyError
from rag.sources.config import parse_sources
from rag.sources.state import StateStore
from rag.sources.sync import SyncReport


def test_a_sync_another_replica_is_running_is_skipped_quietly_and_tried_again(tmp_path, caplog):
    specs = parse_sources({"sources": [{"name": "handbook", "type": "folder", "path": str(tmp_path), "watch": True}]})
    asked: list[SyncRequest] = []
    told: list[str] = []

    def sync(request, progress):
        asked.append(request)
        if len(asked) == 1:
            raise IndexBusyError("a reindex is already running", holder="U0ADMIN01 (slack) on bot-2")
        return SyncReport()

    async def tell(user, text):
        told.append(text)
        return True

    reindexer = Reindexer(lambda progress: None, lambda: None, update_every=0.01, sync=sync)
    scheduler = SyncScheduler(SourceDesk(specs, StateStore(tmp_path / "state")), reindexer,
                              {"slack": Teller(SLACK_STYLE, tell)})
    scheduler._changed.add("handbook")  # a watched change
    with caplog.at_level(logging.INFO):
        asyncio.run(scheduler.once())
    assert asked == [SyncRequest(("handbook",))] and reindexer.last is None and not reindexer.running
    assert not [r for r in caplog.records if r.levelno >= logging.INFO], "not an error to tell anyone"
    asyncio.run(scheduler.once())  # the change is synced once the other replica is done
    assert asked[1:] == [SyncRequest(("handbook",))] and reindexer.last.ok and not told


def test_a_command_names_sources_and_the_mass_delete_word_anywhere():
    assert parse_request("") == SyncRequest()
    assert parse_request(" handbook  runbooks ") == SyncRequest(("handbook", "runbooks"))
    assert parse_request("Allow-Mass-Delete handbook handbook") == SyncRequest(("handbook",), allow_mass_delete=True)
