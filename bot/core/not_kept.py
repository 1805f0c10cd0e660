"""What a user is told when the bot could not keep what they gave it — a vote, a reason, a verdict, a scope
change — because the disk holding its data is full. The core raises `NotKept`; a surface shows its text."""

from __future__ import annotations

import functools
import logging
from collections.abc import Awaitable, Callable
from typing import ParamSpec, TypeVar

from rag.storage import DiskFull

_log = logging.getLogger(__name__)
NOT_KEPT = "Sorry, I couldn't save that: the disk I keep my data on is full. Please try again later."

P = ParamSpec("P")
R = TypeVar("R")


class NotKept(Exception):
    def __init__(self) -> None:
        super().__init__(NOT_KEPT)


def keeping(call: Callable[P, Awaitable[R]]) -> Callable[P, Awaitable[R]]:
    """`call`, with a full disk raised as NotKept (and one warning line for the operator)."""

    @functools.wraps(call)
    async def kept(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return await call(*args, **kwargs)
        except DiskFull as exc:
            _log.warning("%s was not kept: %s", call.__name__, exc)
            raise NotKept() from None

    return kept
