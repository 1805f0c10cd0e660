"""Who is a knowledge-base admin: listed in the settings, or — where the platform can tell — an admin of
the workspace. The platform's answer is kept for a short while, and concurrent checks of one user share
one question, so a busy screen or a burst of votes does not hammer the platform (such calls are rate
limited)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Collection

from cachetools import TTLCache

ADMIN_TTL = 60.0
KEPT_USERS = 10_000  # answers kept at most (the least recently used go first)

# user id -> whether the platform says they are an admin (None: it could not tell)
PlatformCheck = Callable[[str], Awaitable[bool | None]]


class AdminCheck:
    def __init__(self, listed: Collection[str], ttl: float = ADMIN_TTL,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.listed = frozenset(listed)
        self.ttl = ttl
        self._known: TTLCache[str, bool] = TTLCache(KEPT_USERS, ttl, timer=clock)  # user -> what the platform said
        self._asking: dict[str, asyncio.Future[bool | None]] = {}

    async def is_admin(self, user: str, ask: PlatformCheck | None = None) -> bool:
        """Listed, or (with `ask`) an admin as the platform says."""
        if user in self.listed:
            return True
        if ask is None:
            return False
        known = self._known.get(user)
        if known is not None:
            return known
        asking = self._asking.get(user)
        if asking is None:
            asking = asyncio.ensure_future(ask(user))
            self._asking[user] = asking
            asking.add_done_callback(lambda _: self._asking.pop(user, None))
        answer = await asyncio.shield(asking)
        if answer is None:  # the platform could not tell (rate limited, down): refuse now, ask again next time
            return False
        self._known[user] = answer
        return answer
