"""Teams users' Entra groups from Microsoft Graph, for documents whose access list names a group id:
`GET /v1.0/users/{id}/transitiveMemberOf/microsoft.graph.group?$select=id` (every page), with a token of the
bot's own Entra app (application permission GroupMember.Read.All).

Each user's groups are looked up when they first ask and kept for `AIE_GROUPS_TTL`. Like the Slack directory
it fails closed: any error counts as no groups, is logged once (the HTTP status, never the token) and Graph is
asked again only after `RETRY_AFTER`."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Awaitable, Callable
from urllib.parse import quote

import httpx
from cachetools import TTLCache

from bot.core.scopes.groups import GroupDirectory, GroupLookupFailed

GRAPH_URL = "https://graph.microsoft.com"
GRAPH_SCOPE = "https://graph.microsoft.com/.default"
MAX_PAGES = 100  # a user in more groups than 100 pages hold is cut off there (Graph pages hold 100 or more)

Token = Callable[[], Awaitable[str]]  # a bearer token for Graph


def msal_token(connections) -> Token:
    """Graph tokens from the SDK's MSAL provider of the bot's connection (client credentials; MSAL keeps
    them until they expire)."""

    async def token() -> str:
        provider = connections.get_default_connection()
        return await provider.get_access_token(GRAPH_URL, [GRAPH_SCOPE])

    return token


KEPT_USERS = 10_000  # people whose groups are kept at most (the least recently asked go first)


class GraphGroupDirectory(GroupDirectory):
    def __init__(self, token: Token, *, graph_url: str = GRAPH_URL, ttl: float = 300.0, timeout: float = 10.0,
                 name: str = "Teams groups (Microsoft Graph)", clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__(self._no_directory, ttl=ttl, name=name, clock=clock)
        self._token = token
        self.graph_url = graph_url.rstrip("/")
        self._timeout = timeout
        self._users: TTLCache[str, frozenset[str]] = TTLCache(KEPT_USERS, ttl, timer=clock)  # user -> their groups
        self._user_locks: dict[str, asyncio.Lock] = {}

    async def _no_directory(self):
        raise NotImplementedError("Graph is asked user by user")

    async def groups_of(self, user: str) -> frozenset[str]:
        """The Entra groups `user` (an Entra object id) is in, directly or not, as lower-case ids."""
        try:
            object_id = str(uuid.UUID(user))  # a Teams id (29:…) without an Entra id has no groups to ask for
        except ValueError:
            return frozenset()
        async with self._user_locks.setdefault(object_id, asyncio.Lock()):  # one lookup per user at a time
            known = self._users.get(object_id)
            if known is not None:
                return known
            groups = await self._attempt(lambda: self._ask_graph(object_id))
            if groups is None:
                return frozenset()
            self._users[object_id] = groups
            return groups

    async def _ask_graph(self, object_id: str) -> frozenset[str]:
        headers = {"Authorization": f"Bearer {await self._token()}", "Accept": "application/json"}
        url: str | None = (f"{self.graph_url}/v1.0/users/{quote(object_id)}"
                           "/transitiveMemberOf/microsoft.graph.group?$select=id")
        groups: set[str] = set()
        async with httpx.AsyncClient(timeout=self._timeout, follow_redirects=False) as client:
            for _ in range(MAX_PAGES):
                if url is None:
                    break
                if not url.startswith(self.graph_url + "/"):  # the token goes to Graph and nowhere else
                    raise GroupLookupFailed("a next page outside Graph")
                response = await client.get(url, headers=headers)
                if response.status_code != 200:
                    raise GroupLookupFailed(f"HTTP {response.status_code}")
                try:
                    page = response.json()
                    groups |= {str(group["id"]).lower() for group in page.get("value") or []}
                    url = page.get("@odata.nextLink")
                except (ValueError, TypeError, KeyError, AttributeError):
                    raise GroupLookupFailed("unreadable answer") from None
        return frozenset(groups)
