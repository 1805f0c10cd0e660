"""A local Microsoft Graph for tests: real sockets, real HTTP, one background thread. It serves the calls
the bot makes, written from the Graph v1.0 reference:

  GET /v1.0/users/{id}/transitiveMemberOf/microsoft.graph.group?$select=id   in pages of `page_size` groups
                                                        linked by `@odata.nextLink` ("List user transitive memberOf")
  GET /v1.0/users/{id | userPrincipalName}?$select=id   one user ("Get user"; 404 Request_ResourceNotFound)
  GET /v1.0/users?$filter=mail eq '…'&$select=id        users by email ("List users", `value`)
  GET /v1.0/groups?$filter=displayName eq '…'&$select=id   groups by name ("List groups", `value`; the bot
                                                        never asks it: a look-alike group a test may set up)

Users and groups are given as `people` (user principal name or mail -> object id) and `groups` (display
name -> object id); both compare case-insensitively, as Entra does. It answers 401 unless the
Authorization header carries `Bearer {token}`. `fail_next(status)` makes the next calls fail (429 with Retry-After); every call is
recorded with its Authorization header and the status it got."""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass

from aiohttp import web

from tests.fakes.local_server import LocalServer

TOKEN = "graph-token-for-the-tests"


@dataclass
class GraphCall:
    user: str
    skip: int
    authorization: str | None
    status: int


class FakeGraph(LocalServer):
    name = "fake Graph"

    def __init__(self, members: dict[str, list[str]] | None = None, *, page_size: int = 2, token: str = TOKEN,
                 people: dict[str, str] | None = None, groups: dict[str, str] | None = None) -> None:
        super().__init__()
        self.members = dict(members or {})  # Entra object id -> the ids of the groups they are in
        self.people = {k.lower(): v for k, v in (people or {}).items()}  # mail -> object id
        self.groups = {k.lower(): v for k, v in (groups or {}).items()}  # display name -> object id
        self.page_size = page_size
        self.token = token
        self.calls: list[GraphCall] = []
        self._failures: list[int] = []
        self._lock = threading.Lock()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def routes(self, app: web.Application) -> None:
        app.router.add_get("/v1.0/users/{user}/transitiveMemberOf/microsoft.graph.group", self._member_of)
        app.router.add_get("/v1.0/users/{user}", self._user)
        app.router.add_get("/v1.0/users", self._users)
        app.router.add_get("/v1.0/groups", self._groups)

    def fail_next(self, status: int, *, times: int = 1) -> None:
        with self._lock:
            self._failures += [status] * times

    def calls_for(self, user: str) -> list[GraphCall]:
        with self._lock:
            return [c for c in self.calls if c.user == user]

    async def _member_of(self, request: web.Request) -> web.Response:
        user = request.match_info["user"]
        skip = int(request.query.get("$skiptoken", "0"))
        authorization = request.headers.get("Authorization")
        with self._lock:
            status, body, headers = self._answer(user, skip, authorization, request.query.get("$select"))
            self.calls.append(GraphCall(user, skip, authorization, status))
        return web.json_response(body, status=status, headers=headers)

    def _refusal(self, request: web.Request) -> tuple[int, dict, dict] | None:
        """An injected failure, a missing token or a wider $select than the bot asks for; None: answer it."""
        if self._failures:
            status = self._failures.pop(0)
            return status, {"error": {"code": "Injected", "message": "injected"}}, (
                {"Retry-After": "1"} if status == 429 else {})
        if request.headers.get("Authorization") != f"Bearer {self.token}":
            return 401, {"error": {"code": "InvalidAuthenticationToken", "message": "Access token is empty."}}, {}
        if request.query.get("$select") != "id":
            return 400, {"error": {"code": "BadRequest", "message": "the bot asks for ids only"}}, {}
        return None

    async def _user(self, request: web.Request) -> web.Response:
        user = request.match_info["user"]
        with self._lock:
            status, body, headers = self._refusal(request) or self._one_user(user)
            self.calls.append(GraphCall(user, 0, request.headers.get("Authorization"), status))
        return web.json_response(body, status=status, headers=headers)

    def _one_user(self, user: str) -> tuple[int, dict, dict]:
        found = self.people.get(user.lower()) or next((i for i in self.people.values() if i == user), None)
        if found is None:
            return 404, {"error": {"code": "Request_ResourceNotFound", "message": f"'{user}' does not exist"}}, {}
        return 200, {"@odata.context": f"{self.url}/v1.0/$metadata#users(id)/$entity", "id": found}, {}

    async def _users(self, request: web.Request) -> web.Response:
        return self._filtered(request, "users", "mail", self.people)

    async def _groups(self, request: web.Request) -> web.Response:
        return self._filtered(request, "groups", "displayName", self.groups)

    def _filtered(self, request: web.Request, kind: str, field: str, known: dict[str, str]) -> web.Response:
        condition = request.query.get("$filter", "")
        with self._lock:
            refused = self._refusal(request)
            match = re.fullmatch(rf"{field} eq '((?:[^']|'')*)'", condition)
            if refused:
                status, body, headers = refused
            elif match is None:
                status, headers = 400, {}
                body = {"error": {"code": "Request_UnsupportedQuery", "message": f"Unsupported filter: {condition}"}}
            else:
                found = known.get(match.group(1).replace("''", "'").lower())
                status, headers = 200, {}
                body = {"@odata.context": f"{self.url}/v1.0/$metadata#{kind}(id)",
                        "value": [{"id": found}] if found else []}
            self.calls.append(GraphCall(f"{kind}?{condition}", 0, request.headers.get("Authorization"), status))
        return web.json_response(body, status=status, headers=headers)

    def _answer(self, user: str, skip: int, authorization: str | None, select: str | None):
        if self._failures:
            status = self._failures.pop(0)
            return status, {"error": {"code": "Injected", "message": "injected"}}, (
                {"Retry-After": "1"} if status == 429 else {})
        if authorization != f"Bearer {self.token}":
            return 401, {"error": {"code": "InvalidAuthenticationToken", "message": "Access token is empty."}}, {}
        if select != "id":
            return 400, {"error": {"code": "BadRequest", "message": "the bot asks for ids only"}}, {}
        if user not in self.members:
            return 404, {"error": {"code": "Request_ResourceNotFound", "message": f"'{user}' does not exist"}}, {}
        groups = self.members[user]
        page = groups[skip:skip + self.page_size]
        body: dict = {"@odata.context": f"{self.url}/v1.0/$metadata#directoryObjects",
                      "value": [{"@odata.type": "#microsoft.graph.group", "id": g} for g in page]}
        if skip + self.page_size < len(groups):
            body["@odata.nextLink"] = (f"{self.url}/v1.0/users/{user}/transitiveMemberOf/microsoft.graph.group"
                                       f"?$select=id&$skiptoken={skip + self.page_size}")
        return 200, body, {}
