"""De-duplication marks (redelivered events and activities, the twin events of one Slack mention, threads
the bot answered) and the small conversation records kept beside them (see `bot.core.memory`).

They live in a store of their own (see `cache.make_dedup_store`), and its calls — blocking network
round trips with Redis — run on a few threads of their own, never on the event loop, and never queued
behind the answering work that fills the default thread pool.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

from cache import Cache, cache_key

T = TypeVar("T")
MARK = b"1"


class Dedup:
    def __init__(self, store: Cache, workers: int = 4) -> None:
        self.store = store
        self._pool = ThreadPoolExecutor(workers, thread_name_prefix="dedup")

    @property
    def backend(self) -> str:
        return self.store.backend

    async def first(self, key: str, ttl: int) -> bool:
        """True for the first caller that marks `key` (Redis SET NX), False for every later one."""
        return await self._run(self.store.add, key, MARK, ttl)

    async def first_delivery(self, kind: str, *ids: str, ttl: int) -> bool:
        """True the first time a platform delivers the event `ids` name (a redelivery, or the twin event of
        one message, is False on every replica); `kind` names what is delivered, e.g. "event"."""
        return await self.first(cache_key(kind, *ids), ttl)

    async def put_if_absent(self, key: str, value: bytes, ttl: int) -> bool:
        """Store `value` unless `key` holds something already (Redis SET NX); True when this call stored it."""
        return await self._run(self.store.add, key, value, ttl)

    async def mark(self, namespace: str, key: str, ttl: int) -> None:
        await self._run(self.store.set, namespace, key, MARK, ttl)

    async def marked(self, namespace: str, key: str) -> bool:
        return await self._run(self.store.get, namespace, key) is not None

    async def put(self, namespace: str, key: str, value: bytes, ttl: int) -> None:
        await self._run(self.store.set, namespace, key, value, ttl)

    async def get(self, namespace: str, key: str) -> bytes | None:
        return await self._run(self.store.get, namespace, key)

    async def push(self, namespace: str, key: str, value: bytes, keep: int, ttl: int) -> None:
        """Append to a list atomically (see `Cache.push`), keeping its last `keep` items."""
        await self._run(self.store.push, namespace, key, value, keep, ttl)

    async def items(self, namespace: str, key: str) -> list[bytes]:
        return await self._run(self.store.items, namespace, key)

    async def _run(self, call: Callable[..., T], *args: object) -> T:
        return await asyncio.get_running_loop().run_in_executor(self._pool, call, *args)
