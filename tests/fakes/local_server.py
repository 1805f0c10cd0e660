"""An aiohttp server on a free local port, run by one background thread, for the fakes that stand in for
remote services: subclass it, add the routes in `routes` and use it as a context manager. With
`trickle_every` set, every answer's body is sent a byte at a time, that many seconds apart (a server whose
each wait is short and whose answer is long)."""

from __future__ import annotations

import asyncio
import threading

from aiohttp import web


class LocalServer:
    name = "fake-server"

    def __init__(self) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread: threading.Thread | None = None
        self._runner: web.AppRunner | None = None
        self.port: int | None = None
        self.trickle_every: float | None = None

    def routes(self, app: web.Application) -> None:
        raise NotImplementedError

    def __enter__(self):
        ready = threading.Event()
        self._thread = threading.Thread(target=self._serve, args=(ready,), name=self.name, daemon=True)
        self._thread.start()
        ready.wait(10)
        if self.port is None:
            raise RuntimeError(f"the {self.name} did not start")
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        if self._thread is not None:
            self._thread.join(10)

    def _serve(self, ready: threading.Event) -> None:
        asyncio.set_event_loop(self._loop)

        async def start() -> None:
            app = web.Application(middlewares=[self._trickling])
            self.routes(app)
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

    @web.middleware
    async def _trickling(self, request: web.Request, handler) -> web.StreamResponse:
        response = await handler(request)
        every = self.trickle_every
        if every is None or not isinstance(response, web.Response) or not isinstance(response.body, bytes):
            return response
        return await trickled(request, response.status, response.body, dict(response.headers), every)


async def trickled(request: web.Request, status: int, body: bytes, headers: dict[str, str],
                   every: float) -> web.StreamResponse:
    """`body` sent one byte every `every` seconds (until the client gives up)."""
    response = web.StreamResponse(status=status, headers={**headers, "Content-Length": str(len(body))})
    await response.prepare(request)
    try:
        for i in range(len(body)):
            await response.write(body[i : i + 1])
            await asyncio.sleep(every)
    except ConnectionError:
        pass
    return response
