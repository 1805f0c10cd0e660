"""Calls on the state store (see `cache.make_state_store`), which delivery marks (`bot.core.deliveries`)
and conversation state (`bot.core.conversation_state`) share: blocking network round trips with Redis, so
they run on a few threads of their own, never on the event loop, and never queued behind the answering
work that fills the default thread pool."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

from cache import Cache

T = TypeVar("T")


class StateCalls:
    def __init__(self, store: Cache, workers: int = 4, thread_name: str = "state") -> None:
        self.store = store
        self._pool = ThreadPoolExecutor(workers, thread_name_prefix=thread_name)

    @property
    def backend(self) -> str:
        return self.store.backend

    async def _run(self, call: Callable[..., T], *args: object) -> T:
        return await asyncio.get_running_loop().run_in_executor(self._pool, call, *args)
