"""Where something happens in Slack, as the scope resolver needs it: a channel id starting with D is a
direct message (the App Home and the assistant pane are the user's direct message with the app too)."""

from __future__ import annotations

from bot.core.assistant import Assistant
from rag.types import Scope

PLATFORM = "slack"


def is_direct(channel: str) -> bool:
    return channel.startswith("D")


async def scope_in(assistant: Assistant, channel: str, user: str) -> Scope:
    """What may be shown in `channel` to `user` (in a channel: to everyone there)."""
    return await assistant.scope(PLATFORM, channel, user, is_direct(channel))


async def private_scope(assistant: Assistant, user: str, channel: str = "") -> Scope:
    """What may be shown to `user` alone (their direct message with the app, its id when known)."""
    return await assistant.scope(PLATFORM, channel if is_direct(channel) else "", user, True)
