"""The one thread an answer's synchronous stages run in, so that the event loop never waits on their I/O."""

from __future__ import annotations

import asyncio
import contextvars
import itertools
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import ParamSpec, TypeVar

P = ParamSpec("P")
T = TypeVar("T")
_numbers = itertools.count(1)  # thread names tell one answer's worker from another's in logs and tests


class Worker:
    """A thread of one answer's own: `await worker.run(stage, ...)` runs a synchronous stage there. The
    stages of one answer run one after another in it; other answers have their own (they do not queue behind
    each other, nor behind whatever else uses the loop's default executor)."""

    def __init__(self) -> None:
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"answer-{next(_numbers)}")

    async def run(self, stage: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        context = contextvars.copy_context()  # as asyncio.to_thread: log lines keep the event they belong to
        return await asyncio.get_running_loop().run_in_executor(
            self._executor, lambda: context.run(stage, *args, **kwargs))

    def close(self) -> None:
        self._executor.shutdown(wait=False)

    def __enter__(self) -> Worker:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()
