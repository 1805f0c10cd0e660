"""A local Microsoft Graph for tests: real sockets, real HTTP, one background thread. It serves the one call
the bot makes, `GET /v1.0/users/{id}/transitiveMemberOf/microsoft.graph.group?$select=id`, in pages of
`page_size` groups linked by `@odata.nextLink`, and answers 401 unless the Authorization header carries
`Bearer {token}`. `fail_next(status)` makes the next calls fail (429 with Retry-After); every call is
recorded with its Authorization header and the status it got."""

from __future__ import annotations

import asyncio
import threading
from dataclasses import dataclass

from aiohttp import web

TOKEN = "graph-token-for-the-tests"


@dataclass
class GraphCall:
    user: str
    skip: int
    authorization: str | None
    status: int


class FakeGraph:
    def __init__(self, members: dict[str, list[str]] | None = None, *, page_size: int = 2, token: str = TOKEN) -> None:
        self.members = dict(members or {})  # Entra object id -> the ids of the groups they are in
        self.page_size = page_size
        self.token = token
        self.calls: list[GraphCall] = []
        self._failures: list[int] = []
        self._lock = threading.Lock()
        self._loop = asyncio.new_event_loop()
        self._thread: threading.Thread | None = None
        self._runner: web.AppRunner | None = None
        self.port: int | None = None

    def __enter__(self) -> FakeGraph:
        ready = threading.Event()
        self._thread = threading.Thread(target=self._serve, args=(ready,), name="fake-graph", daemon=True)
        self._thread.start()
        ready.wait(10)
        if self.port is None:
            raise RuntimeError("the fake Graph did not start")
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        if self._thread is not None:
            self._thread.join(10)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _serve(self, ready: threading.Event) -> None:
        asyncio.set_event_loop(self._loop)

        async def start() -> None:
            app = web.Application()
            app.router.add_get("/v1.0/users/{user}/transitiveMemberOf/microsoft.graph.group", self._member_of)
            self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=1.0)
            await self._runner.setup()
            site = web.TCPSite(self._runner, "127.0.0.1", 0)
            await site.start()
            self.port = self._runner.addresses[0][1]

        self._loop.run_until_complete(start())
        ready.set()
        try:
            self._loop.run_forever()
        finally:
            self._loop.run_until_complete(self._runner.cleanup())
            self._loop.close()

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
