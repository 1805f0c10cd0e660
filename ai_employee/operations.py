"""What the server shows operators (health, readiness, metrics) and the work it runs in the background:
loading the index before the first question, and switching to each index version another replica announces."""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from bot.core.schedule import SyncScheduler
from bot.server import Operations
from rag.index.snapshot import IndexNotFoundError

if TYPE_CHECKING:
    from bot.core.credentials import CredentialStatus
    from bot.core.services import CoreServices
    from cache import Cache
    from rag.index.coordination import VersionChannel
    from rag.index.retrieval import Retriever

_log = logging.getLogger(__name__)
SYNC_TICK = 5.0  # seconds between looks at which sources are due (sooner for a source synced more often)


@dataclass(frozen=True)
class Served:
    """The knowledge base the server answers from, as its operations watch it (the composition root's parts)."""

    retriever: Retriever  # the index it answers from (`loaded`: None before the first load)
    current_version: Callable[[], str | None]  # the newest published index version
    cache: Cache  # the answer cache
    redis: bool  # whether Redis is configured (then /ready needs it reachable)
    versions: VersionChannel | None  # where other replicas announce new versions (None without Redis)
    sync_every: tuple[float, ...] = ()  # the declared sources' intervals in seconds (0: not scheduled)
    unwritable: Callable[[], str | None] = lambda: None  # why votes and scope changes cannot be saved now


class IndexLoader:
    """Loads the live index in a thread of its own, one load at a time; remembers why a load failed."""

    def __init__(self, retriever: Retriever) -> None:
        self.retriever = retriever
        self.problem: str | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def start(self) -> None:
        with self._lock:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self.load, name="index-load", daemon=True)
                self._thread.start()

    def load(self) -> str | None:
        """The version now served (blocking), or None when there is none to load."""
        try:
            version = self.retriever.snapshot.version
            self.problem = None
            return version
        except IndexNotFoundError:
            self.problem = "no index has been built yet"
        except Exception:  # noqa: BLE001 - e.g. built with another embedder: details in the log, not on /ready
            _log.exception("the index could not be loaded")
            self.problem = "the index could not be loaded (see the log)"
        return None

    def switch(self, announced: str) -> None:
        """Another replica published `announced`: serve it now rather than on the next question."""
        version = self.load()
        if version != announced:
            _log.warning("index version %s was announced but this replica serves %s: do all replicas share "
                         "AIE_DATA_DIR (and index backend)?", announced, version)
        else:
            _log.info("now serving index version %s", version)


def _in_use(cache) -> str:
    """The answer cache really in use: a configured Redis that cannot be reached caches nothing."""
    return "none (redis unreachable)" if getattr(cache, "unreachable", False) else cache.backend


def make_operations(served: Served, services: CoreServices, credentials: CredentialStatus | None = None) -> Operations:
    """`credentials`: what `serve` learnt of each configured surface's credentials (not ready while one of
    them was refused or could not be verified)."""
    cache, retriever = served.cache, served.retriever
    loader = IndexLoader(retriever)
    stop = threading.Event()

    def health() -> dict:
        loaded = retriever.loaded
        return {"status": "ok", "index_version": served.current_version(),
                "serving": loaded.version if loaded else None, "cache": _in_use(cache),
                "reindexing": services.reindexer.running}

    def readiness() -> tuple[bool, dict]:
        loaded = retriever.loaded
        if loaded is None or loaded.version != served.current_version():
            loader.start()  # e.g. the first index was just built: load it without waiting for a question
        index: dict = {"loaded": loaded is not None, "version": loaded.version if loaded else None}
        if loaded is None and loader.problem:
            index["reason"] = loader.problem
        redis: dict = {"configured": served.redis}
        if served.redis:
            redis["reachable"] = bool(getattr(cache, "check", lambda: False)())  # and /health says so
        problem = served.unwritable()  # e.g. the disk is full
        storage: dict = {"writable": problem is None} | ({"reason": problem} if problem else {})
        ok = loaded is not None and redis.get("reachable", True) and problem is None
        return ok, {"index": index, "redis": redis, "storage": storage}

    async def ready() -> tuple[bool, dict]:
        ok, details = await asyncio.to_thread(readiness)
        if credentials is not None:
            credentials.recheck_if_due()
            details["credentials"] = credentials.shown()
            ok = ok and credentials.ok
        return ok, details

    scheduled: list[tuple[SyncScheduler, asyncio.Task]] = []

    def start() -> None:  # on the event loop, as the server starts
        loader.start()
        if problem := served.unwritable():
            _log.warning("%s: answers are not kept for feedback, votes and scope changes cannot be saved, and "
                         "/ready answers 503 until there is room", problem)
        if served.versions is not None:
            served.versions.watch(loader.switch, stop)
        if services.sources is not None:
            scheduler = SyncScheduler(services.sources, services.reindexer, services.tellers,
                                      tick=min([SYNC_TICK, *(every for every in served.sync_every if every > 0)]))
            scheduled.append((scheduler, asyncio.get_running_loop().create_task(scheduler.run())))

    def finish() -> None:
        stop.set()
        for scheduler, task in scheduled:
            scheduler.stop()
            task.cancel()

    metrics = services.metrics.exposition if services.metrics is not None else None
    return Operations(health, ready, metrics, start, finish)
