"""Telling a Slack user that what they gave — a vote, a reason, a verdict, a scope change — could not be kept
(the bot's disk is full), where they gave it."""

from __future__ import annotations

import functools
import logging
from collections.abc import Awaitable, Callable

from bot.core.logs import described
from bot.core.not_kept import NotKept

_log = logging.getLogger(__name__)


def telling_not_kept(listener: Callable[..., Awaitable[None]]) -> Callable[..., Awaitable[None]]:
    """`listener` (which takes `body` and `client`), its user told when NotKept is raised, rather than Bolt
    answering Slack with an error after the listener acknowledged the request."""

    @functools.wraps(listener)  # Bolt passes what the wrapped listener names
    async def run(**kwargs) -> None:
        try:
            await listener(**kwargs)
        except NotKept as exc:
            await tell(kwargs["client"], kwargs["body"], str(exc))

    return run


async def tell(client, body: dict, text: str) -> None:
    """In the channel they used (only they see it), else in a message to them."""
    user = (body.get("user") or {}).get("id") or body.get("user_id")
    channel = (body.get("channel") or {}).get("id") or body.get("channel_id")
    if not user:
        return
    try:
        if channel:
            await client.chat_postEphemeral(channel=channel, user=user, text=text)
        else:
            await client.chat_postMessage(channel=user, text=text)
    except Exception as exc:  # noqa: BLE001 - nothing more can reach the user; the log says why
        _log.error("could not tell a user that what they gave was not kept: %s", described(exc))
