"""A deadline on a whole network request: connecting, the headers and the body.

The HTTP clients' timeouts bound each wait for the next bytes, not the request: a server that sends a byte
every few seconds never trips them and can hold a sync for as long as it likes. `within` runs the request
in a thread of its own and stops waiting for it when its time is up.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future, wait
from typing import TypeVar

T = TypeVar("T")


class Overdue(TimeoutError):
    """The request did not finish within its deadline."""


def within(seconds: float, work: Callable[[threading.Event], T]) -> T:
    """`work(stop)`'s result (or its exception), if it comes within `seconds`; else Overdue. `stop` is then
    set, and the thread left to end by itself: work that reads a body in chunks checks `stop` between them
    (so it ends at its next chunk); a library's request ends at its own read timeout."""
    done: Future[T] = Future()
    stop = threading.Event()

    def run() -> None:
        try:
            done.set_result(work(stop))
        except BaseException as exc:  # noqa: BLE001 - handed to the caller, who raises it
            done.set_exception(exc)

    threading.Thread(target=run, name="request-with-deadline", daemon=True).start()
    if wait((done,), timeout=seconds).not_done:
        stop.set()
        raise Overdue(f"no complete answer within {seconds:g} s")
    return done.result()
