"""/reindex for admins: progress in the channel, a report at the end, answers keep flowing meanwhile."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

from slack_bolt.async_app import AsyncApp
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.reindex import ReindexBusy, failure_text, report_text
from bot.services import BotServices

_log = logging.getLogger(__name__)

NOT_ADMIN = "Sorry, only knowledge-base admins can run `/reindex`. Ask one of them if documents look out of date."
BUSY = "A reindex is already running — its progress message is in the channel where it was started."
CHECKING = "Checking that you can run `/reindex`…"
STARTED = "Reindexing the knowledge base… I'll post progress here."


async def _respond(respond, text: str) -> None:
    try:
        await respond(text)
    except Exception as exc:  # noqa: BLE001 - e.g. the response URL expired; nothing else can reach the admin
        _log.warning("could not answer /reindex through its response URL: %r", exc)


def register(app: AsyncApp, services: BotServices) -> None:
    @app.command("/reindex")
    async def on_reindex(ack, command: dict, client: AsyncWebClient, respond) -> None:
        # Acknowledge before any Slack call: users.info may be rate limited past Slack's 3 s.
        user, channel = command["user_id"], command["channel_id"]
        if services.reindexer.running:
            await ack(BUSY)
            return
        listed = user in services.admins.listed
        await ack(STARTED if listed else CHECKING)
        if not listed:
            if not await services.admins.is_admin(client, user):
                await _respond(respond, NOT_ADMIN)
                return
            await _respond(respond, STARTED)

        async def privately(text: str) -> None:
            await _respond(respond, text)

        await reindex_into(services, client, channel, by=user, privately=privately)


async def reindex_into(services: BotServices, client: AsyncWebClient, channel: str, *, by: str,
                       privately: Callable[[str], Awaitable[None]] | None = None) -> str:
    """Run a reindex with its progress message and report in `channel` (a user id: the admin's DM with the
    app); `privately` reaches the admin when the channel cannot. Returns the report (or failure) text."""
    progress: list[tuple[str, str]] = []  # (channel id, ts): chat.update needs the id Slack answered with

    async def show(text: str) -> None:
        if progress:
            await client.chat_update(channel=progress[0][0], ts=progress[0][1], text=text)
        else:
            posted = await client.chat_postMessage(channel=channel, text=text)
            progress.append((posted.get("channel") or channel, posted["ts"]))

    try:
        report = await services.reindexer.run(show, by=by)
        text = report_text(report)
    except ReindexBusy:
        text = BUSY
        if privately is not None:
            await privately(text)
            return text
    except Exception as exc:  # noqa: BLE001 - the old index keeps serving; the admin gets a short reason
        _log.exception("reindex failed")
        text = failure_text(exc)
    try:
        if progress:
            await client.chat_update(channel=progress[0][0], ts=progress[0][1], text=text)
        else:
            await client.chat_postMessage(channel=channel, text=text)
    except SlackApiError as exc:
        if privately is None:
            _log.error("could not tell the admin how the reindex went: %s", exc.response.get("error"))
        else:
            await privately(text)  # e.g. the bot is not in that channel: tell the admin privately
    return text
