"""Whose thread a reply is in (issue 17, item 13): Slack's "not the bot's" never overwrites the mark the bot
sets when it starts answering there, even when the two cross (on one replica or two sharing Redis)."""

from __future__ import annotations

import asyncio

import pytest

from bot.core.assistant import Assistant
from bot.core.conversation_state import ConversationState
from bot.core.services import CoreServices
from bot.slack.conversation import bot_in_thread, mark_bot_thread
from cache import STATE_PREFIX, MemoryCache, RedisCache

CHANNEL, THREAD = "C0GENERAL", "1700000000.000200"


class SlowReplies:
    """conversations.replies as Slack answers it for a thread with no bot message yet — slowly, so that the
    bot begins answering in the thread while the call is under way."""

    def __init__(self) -> None:
        self.asked = asyncio.Event()
        self.go_on = asyncio.Event()

    async def conversations_replies(self, **_: object) -> dict:
        self.asked.set()
        await self.go_on.wait()
        return {"ok": True, "messages": [{"ts": THREAD, "user": "U0PLAIN01", "text": "lunch?"}]}


def _assistant(state: ConversationState) -> Assistant:
    """A core whose marks are kept in `state` (the thread marks need nothing else of it)."""
    return Assistant(CoreServices(answerer=None, feedback=None, reindexer=None, deliveries=None,
                                  conversation_state=state, adjuster=None, scopes=None, memory=None, index=None))


@pytest.fixture(params=["memory", "redis"])
def stores(request, redis_process) -> tuple[Assistant, Assistant]:
    if request.param == "memory":
        store = MemoryCache()
        return _assistant(ConversationState(store)), _assistant(ConversationState(store))
    return _assistant(ConversationState(RedisCache(redis_process.url, key_prefix=STATE_PREFIX))), \
        _assistant(ConversationState(RedisCache(redis_process.url, key_prefix=STATE_PREFIX)))


def test_a_late_no_from_slack_does_not_undo_the_bots_own_mark(stores):
    chatter, answering = stores

    async def cross() -> tuple[bool, bool]:
        client = SlowReplies()
        looking = asyncio.create_task(bot_in_thread(client, chatter, CHANNEL, THREAD, "U0BOT", "B0BOT"))
        await client.asked.wait()
        await mark_bot_thread(answering, CHANNEL, THREAD)  # a mention in the thread is being answered
        client.go_on.set()
        first = await looking
        return first, await bot_in_thread(SlowReplies(), chatter, CHANNEL, THREAD, "U0BOT", "B0BOT")

    during, after = asyncio.run(asyncio.wait_for(cross(), 10))
    assert during is True  # the reply that crossed the mark is the bot's thread already
    assert after is True  # and later replies are follow-ups, not ignored for ten minutes
