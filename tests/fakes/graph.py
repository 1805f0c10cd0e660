"""A local Microsoft Graph for tests: real sockets, real HTTP, one background thread. It serves the one call
the bot makes, `GET /v1.0/users/{id}/transitiveMemberOf/microsoft.graph.group?$select=id`, in pages of
`page_size` groups linked by `@odata.nextLink`, and answers 401 unless the Authorization header carries
`Bearer {token}`. `fail_next(status)` makes the next calls fail (429 with Retry-After); every call is
recorded with its Authorization header and the status it got."""

from __future__ import annotations

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

    def __init__(self, members: dict[str, list[str]] | None = None, *, page_size: int = 2, token: str = TOKEN) -> None:
        super().__init__()
        self.members = dict(members or {})  # Entra object id -> the ids of the groups they are in
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
