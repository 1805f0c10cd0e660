"""Who belongs to which group (Slack user groups, Teams' Entra groups), for documents whose access list names
a group.

Memberships are fetched for the whole workspace at once (or, for Teams, user by user) and kept for a while
(`AIE_GROUPS_TTL`). A lookup
that fails counts as no membership at all — an access-listed document then reaches only the people named
on it — and is logged once until lookups work again, with the platform's error code and nothing else."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import TypeVar

_log = logging.getLogger(__name__)

Memberships = Mapping[str, frozenset[str]]  # user id -> the ids of their groups
RETRY_AFTER = 30.0  # after a failure, seconds before asking again (until then: no memberships)
T = TypeVar("T")


class GroupLookupFailed(Exception):
    """The platform would not say; `reason` is safe to log (an error code, never a token)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class GroupDirectory:
    def __init__(self, fetch: Callable[[], Awaitable[Memberships]], *, ttl: float = 300.0, name: str = "groups",
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._fetch = fetch
        self.ttl = ttl
        self.name = name
        self._clock = clock
        self._known: Memberships | None = None
        self._fetched = 0.0
        self._failed: float | None = None  # when the last lookup failed (None: it worked)
        self._lock = asyncio.Lock()

    async def groups_of(self, user: str) -> frozenset[str]:
        memberships = await self._memberships()
        return frozenset() if memberships is None else memberships.get(user, frozenset())

    async def _memberships(self) -> Memberships | None:
        async with self._lock:  # concurrent questions share one lookup
            if self._known is not None and self._clock() - self._fetched < self.ttl:
                return self._known
            self._known = await self._attempt(self._fetch)
            self._fetched = self._clock()
            return self._known

    async def _attempt(self, fetch: Callable[[], Awaitable[T]]) -> T | None:
        """`fetch()`, or None when it fails or failed less than RETRY_AFTER ago (logged once until it works)."""
        if self._failed is not None and self._clock() - self._failed < RETRY_AFTER:
            return None
        try:
            result = await fetch()
        except Exception as exc:  # noqa: BLE001 - fail closed, whatever went wrong
            self._fail(exc.reason if isinstance(exc, GroupLookupFailed) else type(exc).__name__)
            return None
        if self._failed is not None:
            _log.info("looking up %s works again", self.name)
        self._failed = None
        return result

    def _fail(self, reason: str) -> None:
        if self._failed is None:
            _log.warning("could not look up %s (%s): documents whose access list names a group reach only the "
                         "people named on them until it works again", self.name, reason)
        self._known, self._failed = None, self._clock()
