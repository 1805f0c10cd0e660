"""/reindex for admins: progress in the channel, a report at the end, answers keep flowing meanwhile. With
declared sources (AIE_SOURCES_FILE), `/reindex handbook runbooks [allow-mass-delete]` syncs those (alone: all)."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

from slack_bolt.async_app import AsyncApp
from slack_sdk.web.async_client import AsyncWebClient

from bot.core.logs import described
from bot.core.reindex import BUSY, STARTED, ReindexOutcome, not_admin
from bot.core.sources import SyncRequest, parse_request, starting_text
from bot.slack.blocks import SLACK_STYLE, escape
from bot.slack.places import private_scope, scope_in
from bot.slack.services import SlackServices
from bot.slack.streaming import delivering

_log = logging.getLogger(__name__)

NOT_ADMIN = not_admin("`/reindex`")
CHECKING = "Checking that you can run `/reindex`…"


async def respond_safely(respond, text: str) -> None:
    """Tell the user through the command's response URL (only they see it)."""
    try:
        await respond(text)
    except Exception as exc:  # noqa: BLE001 - e.g. the response URL expired; nothing else can reach the user
        _log.warning("could not answer a slash command through its response URL: %s", described(exc))


def register(app: AsyncApp, services: SlackServices) -> None:
    @app.command("/reindex")
    async def on_reindex(ack, command: dict, client: AsyncWebClient, respond) -> None:
        # Acknowledge before any Slack call: users.info may be rate limited past Slack's 3 s.
        user, channel = command["user_id"], command["channel_id"]
        if services.assistant.reindexing:
            await ack(BUSY)
            return
        listed = user in services.admins.listed
        if not listed:
            await ack(CHECKING)
            if not await services.admins.is_admin(client, user):
                await respond_safely(respond, NOT_ADMIN)
                return
        request, reply = _request(services, command.get("text") or "")
        if listed:
            await ack(reply)
        else:
            await respond_safely(respond, reply)
        if request is None:
            return

        async def privately(text: str) -> None:
            await respond_safely(respond, text)

        await reindex_into(services, client, channel, by=user, privately=privately, request=request)


def _request(services: SlackServices, words: str) -> tuple[SyncRequest | None, str]:
    """The sync the admin asked for and what to tell them (None: nothing to run: a source they named is
    unknown). Without declared sources the words are ignored and the index is refreshed, as always."""
    if not services.assistant.has_sources:
        return SyncRequest(), STARTED
    request = parse_request(words)
    unknown = services.assistant.unknown_sources(request)
    if unknown:
        return None, escape(unknown)
    return request, starting_text(request, SLACK_STYLE)


class _ChannelMessage:
    """The reindex's progress message in a Slack channel (or, for a user id, the admin's DM with the app)."""

    def __init__(self, client: AsyncWebClient, channel: str) -> None:
        self.client, self.channel = client, channel
        self.posted: tuple[str, str] | None = None  # (channel id, ts): chat.update needs the id Slack answered with

    async def show(self, text: str) -> None:
        async with delivering():
            if self.posted:
                await self.client.chat_update(channel=self.posted[0], ts=self.posted[1], text=text)
            else:
                posted = await self.client.chat_postMessage(channel=self.channel, text=text)
                self.posted = (posted.get("channel") or self.channel, posted["ts"])


async def reindex_into(services: SlackServices, client: AsyncWebClient, channel: str, *, by: str,
                       privately: Callable[[str], Awaitable[None]] | None = None,
                       request: SyncRequest | None = None) -> ReindexOutcome:
    """Run a reindex with its progress message and report in `channel` (a user id: the admin's DM with the
    app); `privately` reaches the admin when the channel cannot. The report names only the files whoever
    reads it there may read (everyone in a channel; the admin in their DM)."""

    assistant = services.assistant

    async def visible():
        scope = await (private_scope(assistant, by) if channel == by else scope_in(assistant, channel, by))
        return await assistant.names_visible_to(scope)

    outcome = await assistant.reindex(_ChannelMessage(client, channel), SLACK_STYLE, by=by, platform="slack",
                                      visible=visible, request=request)
    if not outcome.told and privately is not None:  # busy, or e.g. the bot is not in that channel
        await privately(outcome.text)
    return outcome
