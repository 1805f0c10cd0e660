"""The Slack app: Bolt (async) with retry handling, event de-duplication and the listeners."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping

from aiohttp import web
from slack_bolt.adapter.aiohttp import to_aiohttp_response, to_bolt_request
from slack_bolt.async_app import AsyncApp
from slack_bolt.request.async_request import AsyncBoltRequest
from slack_bolt.response import BoltResponse
from slack_sdk.http_retry.builtin_async_handlers import AsyncServerErrorRetryHandler
from slack_sdk.signature import SignatureVerifier

from bot.core.logs import described, event_id_var
from bot.core.not_kept import NotKept
from bot.slack.config import MissingCredentials, SlackSettings
from bot.slack.listeners import register
from bot.slack.not_kept import tell
from bot.slack.retries import RateLimitRetries
from bot.slack.services import SlackServices

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
        if event_id and not await services.assistant.first_delivery("event", event_id, ttl=EVENT_TTL):
            retry = (req.headers.get("x-slack-retry-num") or ["0"])[0]
            _log.info("duplicate delivery of %s ignored (retry %s)", event_id, retry)
            return BoltResponse(status=200, body="")
        return await next()

    @app.error
    async def on_error(error: Exception, body: dict, client) -> None:
        if isinstance(error, NotKept):
            await tell(client, body, str(error))
        else:
            _log.error("a Slack listener failed: %s", described(error), exc_info=error)

    register(app, services)
    return app




def add_routes(application: web.Application, app: AsyncApp, settings: SlackSettings,
               acked: Callable[[float], None] | None = None) -> None:
    """Slack's HTTP endpoint: only with a signing secret (a request signed with an empty key is a forgery).

    A signed event is acknowledged at once and handed to Bolt afterwards: its 200 waits for nothing the bot
    does with it (de-duplication, listeners, answering). `acked` gets each such ack's time in the handler,
    on the event loop's clock."""
    if not settings.slack_signing_secret:
        raise MissingCredentials("Slack over HTTP needs SLACK_SIGNING_SECRET")
    verifier = SignatureVerifier(settings.slack_signing_secret.get_secret_value())
    dispatching: set[asyncio.Task] = set()  # referenced until done, so none is collected mid-way

    async def slack(request: web.Request) -> web.Response:
        loop = asyncio.get_running_loop()
        began = loop.time()
        # Slack signs every request it sends: what it did not sign is refused before its body is read as
        # anything (a body no parser takes, sent unsigned, gave a 500 and a stack trace in the log)
        if not _signed(await request.read(), request.headers, verifier):
            return web.Response(status=401, text="invalid request")
        try:
            bolt_request = await to_bolt_request(request)
        except ValueError:  # (UnicodeDecodeError, a JSON error): nothing Slack sends
            _log.warning("a signed Slack request whose body could not be read was refused")
            return web.Response(status=400, text="bad request")
        if not _event(bolt_request):
            return await to_aiohttp_response(await app.async_dispatch(bolt_request))
        task = loop.create_task(app.async_dispatch(bolt_request))
        dispatching.add(task)
        task.add_done_callback(_dispatched(dispatching))
        if acked is not None:
            acked(loop.time() - began)
        return web.Response(status=200)

    application.router.add_post(EVENTS_PATH, slack)


def _signed(body: bytes, headers: Mapping[str, str], verifier: SignatureVerifier) -> bool:
    try:
        return verifier.is_valid(body, headers.get("X-Slack-Request-Timestamp"), headers.get("X-Slack-Signature"))
    except ValueError:  # a timestamp that is no number
        return False


def _event(request: AsyncBoltRequest) -> bool:
    """An Events API delivery (Bolt acks those with an empty 200 whatever follows)."""
    return isinstance(request.body, dict) and request.body.get("type") == "event_callback"


def _dispatched(dispatching: set[asyncio.Task]) -> Callable[[asyncio.Task], None]:
    def done(task: asyncio.Task) -> None:
        dispatching.discard(task)
        if not task.cancelled() and task.exception() is not None:
            _log.error("handling a Slack event failed", exc_info=task.exception())

    return done
