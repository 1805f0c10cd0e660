"""/scope: the collections this channel (or direct message) answers from — shown to anyone, changed by
admins (the same rule as /reindex): `/scope hr,public`, `/scope reset`. Replies reach only the person who
typed the command."""

from __future__ import annotations

from slack_bolt.async_app import AsyncApp
from slack_sdk.web.async_client import AsyncWebClient

from bot.core.not_kept import NotKept
from bot.core.scopes.command import ScopeRequest, ScopeStyle
from bot.slack.blocks import escape
from bot.slack.listeners.commands import respond_safely
from bot.slack.places import PLATFORM, is_direct
from bot.slack.services import SlackServices

STYLE = ScopeStyle(command="/scope", bold="*", person=lambda user: f"<@{user}>", escape=escape)


def register(app: AsyncApp, services: SlackServices) -> None:
    @app.command("/scope")
    async def on_scope(ack, command: dict, client: AsyncWebClient, respond) -> None:
        await ack()  # before any Slack call: users.info may take longer than Slack's 3 seconds
        user, channel = command["user_id"], command["channel_id"]
        admin = await services.admins.is_admin(client, user)
        request = ScopeRequest(PLATFORM, channel, is_direct(channel), user, command.get("text") or "")
        try:
            reply = await services.assistant.scope_command(request, admin, STYLE)
        except NotKept as exc:
            reply = str(exc)
        await respond_safely(respond, reply)
