"""The Slack app: Bolt (async) with retry handling, event de-duplication and the listeners."""

from __future__ import annotations

import logging

from aiohttp import web
from slack_bolt.adapter.aiohttp import to_aiohttp_response, to_bolt_request
from slack_bolt.async_app import AsyncApp
from slack_bolt.request.async_request import AsyncBoltRequest
from slack_bolt.response import BoltResponse
from slack_sdk.http_retry.builtin_async_handlers import AsyncServerErrorRetryHandler

from bot.core.logs import event_id_var
from bot.slack.config import MissingCredentials, SlackSettings
from bot.slack.listeners import register
from bot.slack.retries import RateLimitRetries
from bot.slack.services import SlackServices
from cache import cache_key

_log = logging.getLogger(__name__)
EVENT_TTL = 3600
EVENTS_PATH = "/slack/events"  # Events API, interactivity and /reindex


def create_app(services: SlackServices) -> AsyncApp:
    settings = services.settings
    # Bolt builds the client from the token: given a client as well, it warns that $SLACK_BOT_TOKEN is unused.
    token, secret = settings.slack_bot_token, settings.slack_signing_secret  # no secret in Socket Mode
    app = AsyncApp(token=token.get_secret_value() if token else None,
                   signing_secret=secret.get_secret_value() if secret else "", process_before_response=False)
    app.client.base_url = settings.api_url  # every request's client copies these from the app's
    app.client.retry_handlers.extend([RateLimitRetries(max_retry_count=3),
                                      AsyncServerErrorRetryHandler(max_retry_count=2)])

    @app.middleware
    async def deduplicate_events(req: AsyncBoltRequest, resp: BoltResponse, next):  # noqa: A002 - Bolt's name
        event_id = req.body.get("event_id") if isinstance(req.body, dict) else None
        event_id_var.set(event_id or "")
        if event_id and not await services.dedup.first(cache_key("event", event_id), EVENT_TTL):
            retry = (req.headers.get("x-slack-retry-num") or ["0"])[0]
            _log.info("duplicate delivery of %s ignored (retry %s)", event_id, retry)
            return BoltResponse(status=200, body="")
        return await next()

    register(app, services)
    return app


def add_routes(application: web.Application, app: AsyncApp, settings: SlackSettings) -> None:
    """Slack's HTTP endpoint: only with a signing secret (a request signed with an empty key is a forgery)."""
    if not settings.slack_signing_secret:
        raise MissingCredentials("Slack over HTTP needs SLACK_SIGNING_SECRET")

    async def slack(request: web.Request) -> web.Response:
        return await to_aiohttp_response(await app.async_dispatch(await to_bolt_request(request)))

    application.router.add_post(EVENTS_PATH, slack)
