"""Who is a knowledge-base admin: listed in AIE_ADMIN_USER_IDS, or a Slack workspace admin or owner.

The users.info answer is kept for a short while, and concurrent checks of one user share one call, so a
busy Home tab or a burst of source votes does not hammer Slack (users.info is rate limited).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Collection

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

_log = logging.getLogger(__name__)
ADMIN_TTL = 60.0


async def workspace_admin(client: AsyncWebClient, user: str) -> bool | None:
    """Whether Slack says `user` is a workspace admin or owner; None when Slack could not tell."""
    try:
        info = (await client.users_info(user=user)).get("user", {})
    except SlackApiError as exc:
        _log.warning("users.info failed for %s: %s", user, exc.response.get("error"))
        return None
    return bool(info.get("is_admin") or info.get("is_owner") or info.get("is_primary_owner"))


class AdminCheck:
    def __init__(self, listed: Collection[str], ttl: float = ADMIN_TTL,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.listed = frozenset(listed)
        self.ttl = ttl
        self._clock = clock
        self._known: dict[str, tuple[bool, float]] = {}  # user -> (admin, when Slack said so)
        self._asking: dict[str, asyncio.Future[bool | None]] = {}

    async def is_admin(self, client: AsyncWebClient, user: str) -> bool:
        if user in self.listed:
            return True
        known = self._known.get(user)
        if known is not None and self._clock() - known[1] < self.ttl:
            return known[0]
        asking = self._asking.get(user)
        if asking is None:
            asking = asyncio.ensure_future(workspace_admin(client, user))
            self._asking[user] = asking
            asking.add_done_callback(lambda _: self._asking.pop(user, None))
        answer = await asyncio.shield(asking)
        if answer is None:  # Slack could not tell (rate limited, down): refuse now, ask again next time
            return False
        self._known[user] = (answer, self._clock())
        return answer
