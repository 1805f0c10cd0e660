"""The one thread an answer's synchronous stages run in, so that the event loop never waits on their I/O."""

from __future__ import annotations

import asyncio
import contextvars
import itertools
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import ParamSpec, TypeVar

P = ParamSpec("P")
T = TypeVar("T")
_numbers = itertools.count(1)  # thread names tell one answer's worker from another's in logs and tests
# Threads of finished answers, kept for the next ones: starting a thread costs more (~1 ms on a busy machine)
# than all of an answer's hops to it.
_idle: list[ThreadPoolExecutor] = []
_idle_lock = threading.Lock()
KEPT = 8  # idle threads kept at most


class Worker:
    """A thread of one answer's own: `await worker.run(stage, ...)` runs a synchronous stage there. The
    stages of one answer run one after another in it; other answers have their own (they do not queue behind
    each other, nor behind whatever else uses the loop's default executor). A finished answer's thread is
    kept for a later answer."""

    def __init__(self) -> None:
        with _idle_lock:
            kept = _idle.pop() if _idle else None
        self._executor = kept or ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"answer-{next(_numbers)}")

    async def run(self, stage: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        context = contextvars.copy_context()  # as asyncio.to_thread: log lines keep the event they belong to
        return await asyncio.get_running_loop().run_in_executor(
            self._executor, lambda: context.run(stage, *args, **kwargs))

    def close(self) -> None:
        with _idle_lock:
            if len(_idle) < KEPT:
                _idle.append(self._executor)
                return
        self._executor.shutdown(wait=False)

    def __enter__(self) -> Worker:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()
