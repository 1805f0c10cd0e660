"""/reindex for admins: progress in the channel, a report at the end, answers keep flowing meanwhile."""

from __future__ import annotations

import logging

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


async def is_admin(client: AsyncWebClient, user: str) -> bool:
    try:
        info = (await client.users_info(user=user)).get("user", {})
    except SlackApiError as exc:
        _log.warning("users.info failed for %s: %s", user, exc.response.get("error"))
        return False
    return bool(info.get("is_admin") or info.get("is_owner") or info.get("is_primary_owner"))


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
        listed = user in services.settings.admins
        await ack(STARTED if listed else CHECKING)
        if not listed:
            if not await is_admin(client, user):
                await _respond(respond, NOT_ADMIN)
                return
            await _respond(respond, STARTED)
        await _reindex(services, client, channel, respond)


async def _reindex(services: BotServices, client: AsyncWebClient, channel: str, respond) -> None:
    progress_ts: list[str] = []

    async def show(text: str) -> None:
        if progress_ts:
            await client.chat_update(channel=channel, ts=progress_ts[0], text=text)
        else:
            progress_ts.append((await client.chat_postMessage(channel=channel, text=text))["ts"])

    try:
        report = await services.reindexer.run(show)
        text = report_text(report)
    except ReindexBusy:
        await _respond(respond, BUSY)
        return
    except Exception as exc:  # noqa: BLE001 - the old index keeps serving; the admin gets a short reason
        _log.exception("reindex failed")
        text = failure_text(exc)
    try:
        if progress_ts:
            await client.chat_update(channel=channel, ts=progress_ts[0], text=text)
        else:
            await client.chat_postMessage(channel=channel, text=text)
    except SlackApiError:
        await _respond(respond, text)  # e.g. the bot is not in that channel: tell the admin privately
