"""Serve the chat surfaces over HTTP on one port — Slack on /slack/events, Teams on /api/messages — with
/health for the host; or Slack through Socket Mode, with /health still on HTTP."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from aiohttp import web

_log = logging.getLogger(__name__)

Routes = Callable[[web.Application], None]  # a surface adds its endpoints


def web_app(health: Callable[[], dict], surfaces: list[Routes]) -> web.Application:
    async def healthz(_: web.Request) -> web.Response:
        return web.json_response(health())

    application = web.Application()
    for add_routes in surfaces:
        add_routes(application)
    application.router.add_get("/health", healthz)
    return application


async def serve_http(application: web.Application, host: str, port: int, what: str) -> None:
    runner = web.AppRunner(application)
    await runner.setup()
    site = web.TCPSite(runner, host, port)
    await site.start()
    _log.info("serving %s on http://%s:%d (health: /health)", what, host, port)
    try:
        await asyncio.Event().wait()
    finally:
        await runner.cleanup()


async def serve_socket_mode(slack_app, app_token: str, application: web.Application, host: str, port: int) -> None:
    from slack_bolt.adapter.socket_mode.aiohttp import AsyncSocketModeHandler

    runner = web.AppRunner(application)  # the health endpoint (and Teams, if configured) stay on HTTP
    await runner.setup()
    await web.TCPSite(runner, host, port).start()
    _log.info("connecting to Slack with Socket Mode (health: http://%s:%d/health)", host, port)
    try:
        await AsyncSocketModeHandler(slack_app, app_token).start_async()
    finally:
        await runner.cleanup()
