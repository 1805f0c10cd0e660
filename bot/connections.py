"""The HTTP server's guard against clients that hold connections without finishing their requests: a deadline
on each request's head and on its body, a cap on open connections below the process's open-file limit (when
it is reached, the connection waiting longest for a request is closed to make room, else the newcomer is
refused with a 503), and warnings about all of it at most once a minute."""

from __future__ import annotations

import asyncio
import errno
import logging
import resource
import time
from collections.abc import Awaitable, Callable

from aiohttp import web
from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

_log = logging.getLogger(__name__)
WARN_EVERY = 60.0  # seconds between two warnings of one kind
_OUT_OF_FILES = {errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM}
_BUSY = b"too many connections: retry later\n"
_REFUSED = (b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain\r\nConnection: close\r\n"
            b"Content-Length: %d\r\n\r\n%s" % (len(_BUSY), _BUSY))


class HttpLimits(BaseSettings):
    model_config = SettingsConfigDict(env_file=".env", extra="ignore")

    # Seconds a client has to send a request's head (its line and headers): from connecting, or from the
    # first byte of a further request on a kept-alive connection.
    header_timeout: float = Field(10.0, gt=0, validation_alias="AIE_HEADER_TIMEOUT")
    # Seconds a client has to send a request's whole body, once its head is in.
    body_timeout: float = Field(30.0, gt=0, validation_alias="AIE_BODY_TIMEOUT")
    # Connections open at once (at most half the open-file limit): beyond it, the one waiting longest for a
    # request is closed to make room, or when every one is in a request the newcomer gets a 503.
    max_connections: int = Field(1000, ge=1, validation_alias="AIE_MAX_CONNECTIONS")


class Throttled:
    """A warning logged at most once per `every` seconds, counting the times it happened since its last line."""

    def __init__(self, message: str, every: float = WARN_EVERY, clock: Callable[[], float] = time.monotonic) -> None:
        self.message = message  # %d: the count, then the arguments given to `happened`
        self.every = every
        self._clock = clock
        self._count = 0
        self._last: float | None = None

    def happened(self, *args: object) -> None:
        self._count += 1
        now = self._clock()
        if self._last is None or now - self._last >= self.every:
            _log.warning(self.message, self._count, *args)
            self._count, self._last = 0, now


def open_file_limit() -> int:
    """The files this process may open, after raising its soft limit as far as the hard one allows."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = hard if hard != resource.RLIM_INFINITY else max(soft, 65536)
    if soft != resource.RLIM_INFINITY and soft < wanted:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
            soft = wanted
        except (ValueError, OSError):  # e.g. a platform that caps it lower: keep the soft limit
            pass
    return soft


class _Connection(asyncio.Protocol):
    """One client's connection: aiohttp's protocol inside, with a deadline on each request's head."""

    def __init__(self, guard: ConnectionGuard, inner: asyncio.Protocol) -> None:
        self._guard, self.inner = guard, inner
        self.transport: asyncio.BaseTransport | None = None
        self._deadline: asyncio.TimerHandle | None = None
        self._busy = False  # its request's head is in: the server is handling it
        self._closing = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport
        self.inner.connection_made(transport)
        if self._closing:  # made room for another before it was even made
            transport.close()
        else:
            self._await_head()

    def data_received(self, data: bytes) -> None:
        if not self._busy and self._deadline is None:  # a further request begins on a kept-alive connection
            self._await_head()
        self.inner.data_received(data)

    def eof_received(self) -> bool | None:
        return self.inner.eof_received()

    def pause_writing(self) -> None:
        self.inner.pause_writing()

    def resume_writing(self) -> None:
        self.inner.resume_writing()

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop_deadline()
        self._guard.closed(self)
        self.inner.connection_lost(exc)

    def request_started(self) -> None:
        self._busy = True
        self._stop_deadline()
        self._guard.busy(self)

    def request_finished(self) -> None:
        self._busy = False  # kept alive, it waits for a further request (no deadline until its first byte)
        self._guard.waiting(self)

    def close(self) -> None:
        self._closing = True
        self._stop_deadline()
        if self.transport is not None:
            self.transport.close()

    def _await_head(self) -> None:
        self._stop_deadline()
        loop = asyncio.get_running_loop()
        self._deadline = loop.call_later(self._guard.limits.header_timeout, self._head_too_slow)

    def _head_too_slow(self) -> None:
        self._deadline = None
        self._guard.slow.happened()
        self.close()

    def _stop_deadline(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None


class _Refused(asyncio.Protocol):
    """A connection over the cap: told 503 at once, and closed."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        transport.write(_REFUSED)  # type: ignore[attr-defined]
        transport.close()


class ConnectionGuard:
    """The limits applied to one server's connections: `protocol` wraps aiohttp's, `middleware` times bodies."""

    def __init__(self, limits: HttpLimits, files: int) -> None:
        self.limits = limits
        self.cap = max(1, min(limits.max_connections, files // 2))
        # Connections queued for accepting, and accepted at once (each a file before it can be refused): a
        # quarter of the files is left for everything else.
        self.backlog = max(1, min(128, files // 8))
        self.slow = Throttled(f"closed %d connection(s) that did not send a request's head within "
                              f"{limits.header_timeout:g} s (AIE_HEADER_TIMEOUT) or its body within "
                              f"{limits.body_timeout:g} s (AIE_BODY_TIMEOUT) since the last such line")
        self.crowded = Throttled(f"closed %d connection(s) waiting for a request since the last such line, to make "
                                 f"room for newer ones: {self.cap} were open (AIE_MAX_CONNECTIONS)")
        self.refused = Throttled(f"refused %d connection(s) since the last such line: {self.cap} were open, "
                                 "all of them in a request (AIE_MAX_CONNECTIONS)")
        self.unaccepted = Throttled("could not accept %d connection(s) since the last such line: %s")
        self._open: dict[asyncio.Protocol, _Connection] = {}  # by aiohttp's protocol inside
        self._waiting: dict[_Connection, None] = {}  # those waiting for a request's head, longest first

    def protocol(self, server: Callable[[], asyncio.Protocol]) -> Callable[[], asyncio.Protocol]:
        """The protocol factory of a listening socket, around aiohttp's `server`."""

        def connect() -> asyncio.Protocol:
            if len(self._open) >= self.cap and not self._make_room():
                self.refused.happened()
                return _Refused()
            connection = _Connection(self, server())
            self._open[connection.inner] = connection
            self._waiting[connection] = None
            return connection

        return connect

    def _make_room(self) -> bool:
        """Close the connection that has waited longest for a request; False when every one is in a request."""
        if not self._waiting:
            return False
        oldest = next(iter(self._waiting))
        self.crowded.happened()
        self.closed(oldest)  # its slot is free now; its socket closes on the next turn of the loop
        oldest.close()
        return True

    def closed(self, connection: _Connection) -> None:
        self._open.pop(connection.inner, None)
        self._waiting.pop(connection, None)

    def busy(self, connection: _Connection) -> None:
        self._waiting.pop(connection, None)

    def waiting(self, connection: _Connection) -> None:
        if connection.inner in self._open:
            self._waiting[connection] = None

    @web.middleware
    async def middleware(self, request: web.Request,
                         handler: Callable[[web.Request], Awaitable[web.StreamResponse]]) -> web.StreamResponse:
        """Marks the connection busy while its request is handled, and reads the body first, within its deadline
        (the handlers' own reads get it from aiohttp's copy)."""
        connection = self._open.get(request.protocol)
        if connection is not None:
            connection.request_started()
        try:
            if request.body_exists:
                await self._read_body(request)
            return await handler(request)
        finally:
            if connection is not None:
                connection.request_finished()

    async def _read_body(self, request: web.Request) -> None:
        try:
            async with asyncio.timeout(self.limits.body_timeout):
                await request.read()
        except TimeoutError:
            self.slow.happened()
            refusal = web.HTTPRequestTimeout(text=f"the request's body did not arrive within "
                                                  f"{self.limits.body_timeout:g} s")
            refusal.force_close()
            raise refusal from None
        except ConnectionError:  # the client left before sending it all: no one to answer, nothing to log
            raise web.HTTPBadRequest(text="the request's body was cut short") from None

    def on_loop_error(self, loop: asyncio.AbstractEventLoop, context: dict) -> None:
        """The event loop's error handler: a listening socket that cannot accept (out of files or memory: the
        loop retries a second later) is one warning a minute, not a traceback a time."""
        exc = context.get("exception")
        if "socket" in context and isinstance(exc, OSError) and exc.errno in _OUT_OF_FILES:
            self.unaccepted.happened(exc.strerror or str(exc))
            return
        loop.default_exception_handler(context)


class GuardedSite(web.BaseSite):
    """A TCP site whose connections `guard` keeps within its limits."""

    def __init__(self, runner: web.AppRunner, host: str, port: int, guard: ConnectionGuard) -> None:
        super().__init__(runner)
        self._host, self._port, self._guard = host, port, guard

    @property
    def name(self) -> str:
        return f"http://{self._host}:{self._port}"

    async def start(self) -> None:
        await super().start()
        loop = asyncio.get_running_loop()
        loop.set_exception_handler(self._guard.on_loop_error)
        self._server = await loop.create_server(self._guard.protocol(self._runner.server), self._host, self._port,
                                                reuse_address=True, backlog=self._guard.backlog)
