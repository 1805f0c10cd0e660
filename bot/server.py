"""Serve the chat surfaces over HTTP on one port — Slack on /slack/events, Teams on /api/messages — with
/health, /ready and /metrics for the host; or Slack through Socket Mode, with those still on HTTP."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from aiohttp import web

from bot.connections import ConnectionGuard, GuardedSite, HttpLimits, open_file_limit

_log = logging.getLogger(__name__)

Routes = Callable[[web.Application], None]  # a surface adds its endpoints


@dataclass
class Operations:
    """What the host and the operators see, and the background work that lives as long as the server."""

    health: Callable[[], dict]  # alive: always 200 (blocking: run off the event loop)
    ready: Callable[[], Awaitable[tuple[bool, dict]]] | None = None  # 503 until it can answer
    metrics: Callable[[], tuple[bytes, str]] | None = None  # Prometheus text and its content type
    start: Callable[[], None] | None = None
    stop: Callable[[], None] | None = None


def web_app(ops: Operations, surfaces: list[Routes]) -> web.Application:
    async def healthz(_: web.Request) -> web.Response:
        return web.json_response(await asyncio.to_thread(ops.health))  # it asks the index store: blocking

    async def readyz(_: web.Request) -> web.Response:
        ready, details = await ops.ready()
        return web.json_response({"ready": ready, **details}, status=200 if ready else 503)

    async def metrics(_: web.Request) -> web.Response:
        body, content_type = await asyncio.to_thread(ops.metrics)  # a scrape reads the sources' state files
        return web.Response(body=body, headers={"Content-Type": content_type})

    application = web.Application()
    for add_routes in surfaces:
        add_routes(application)
    application.router.add_get("/health", healthz)
    if ops.ready is not None:
        application.router.add_get("/ready", readyz)
    if ops.metrics is not None:
        application.router.add_get("/metrics", metrics)
    if ops.start is not None:
        application.on_startup.append(lambda _: _call(ops.start))
    if ops.stop is not None:
        application.on_cleanup.append(lambda _: _call(ops.stop))
    return application


async def _call(hook: Callable[[], None]) -> None:
    hook()


async def _start(application: web.Application, host: str, port: int, limits: HttpLimits) -> web.AppRunner:
    """`application` listening on host:port, its connections kept within `limits`."""
    files = open_file_limit()
    guard = ConnectionGuard(limits, files)
    if guard.cap < limits.max_connections:
        _log.warning("at most %d connections at once, not AIE_MAX_CONNECTIONS=%d: the process may open %d files "
                     "(raise its limit, e.g. ulimit -n)", guard.cap, limits.max_connections, files)
    application.middlewares.append(guard.middleware)
    # lingering_time=0: a request whose body is not read to its end (too slow, too large) closes its connection
    runner = web.AppRunner(application, lingering_time=0)
    await runner.setup()
    await GuardedSite(runner, host, port, guard).start()
    return runner


async def serve_http(application: web.Application, host: str, port: int, what: str, limits: HttpLimits) -> None:
    runner = await _start(application, host, port, limits)
    _log.info("serving %s on http://%s:%d (/health, /ready, /metrics)", what, host, port)
    try:
        await asyncio.Event().wait()
    finally:
        await runner.cleanup()


async def serve_socket_mode(slack_app, app_token: str, application: web.Application, host: str, port: int,
                            limits: HttpLimits) -> None:
    from slack_bolt.adapter.socket_mode.aiohttp import AsyncSocketModeHandler

    runner = await _start(application, host, port, limits)  # the health endpoint (and Teams, if configured) stay on HTTP
    _log.info("connecting to Slack with Socket Mode (/health, /ready, /metrics on http://%s:%d)", host, port)
    try:
        await AsyncSocketModeHandler(slack_app, app_token).start_async()
    finally:
        await runner.cleanup()
