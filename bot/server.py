"""Serve the app: HTTP (Events API, interactivity and commands on one port, plus /health) or Socket Mode."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from aiohttp import web
from slack_bolt.adapter.aiohttp import to_aiohttp_response, to_bolt_request
from slack_bolt.async_app import AsyncApp

_log = logging.getLogger(__name__)
EVENTS_PATH = "/slack/events"


def web_app(app: AsyncApp, health: Callable[[], dict]) -> web.Application:
    async def slack(request: web.Request) -> web.Response:
        return await to_aiohttp_response(await app.async_dispatch(await to_bolt_request(request)))

    async def healthz(_: web.Request) -> web.Response:
        return web.json_response(health())

    application = web.Application()
    application.router.add_post(EVENTS_PATH, slack)
    application.router.add_get("/health", healthz)
    return application


async def serve_http(app: AsyncApp, health: Callable[[], dict], host: str, port: int) -> None:
    runner = web.AppRunner(web_app(app, health))
    await runner.setup()
    site = web.TCPSite(runner, host, port)
    await site.start()
    _log.info("serving Slack events on http://%s:%d%s (health: /health)", host, port, EVENTS_PATH)
    try:
        await asyncio.Event().wait()
    finally:
        await runner.cleanup()


async def serve_socket_mode(app: AsyncApp, app_token: str, health: Callable[[], dict], host: str, port: int) -> None:
    from slack_bolt.adapter.socket_mode.aiohttp import AsyncSocketModeHandler

    runner = web.AppRunner(web_app(app, health))  # the health endpoint stays available for the host
    await runner.setup()
    await web.TCPSite(runner, host, port).start()
    _log.info("connecting to Slack with Socket Mode (health: http://%s:%d/health)", host, port)
    try:
        await AsyncSocketModeHandler(app, app_token).start_async()
    finally:
        await runner.cleanup()
