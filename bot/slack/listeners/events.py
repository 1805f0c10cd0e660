"""Mentions in channels, direct messages, and follow-ups in threads the bot answered."""

from __future__ import annotations

import asyncio
import logging

from slack_bolt.async_app import AsyncApp
from slack_sdk.web.async_client import AsyncWebClient

from bot.core.answering import nothing_to_ask
from bot.slack.conversation import (
    EMPTY_QUESTION,
    answer_in_thread,
    ask_for_a_question,
    bot_in_thread,
    clean_question,
    first_time,
    mark_bot_thread,
    thread_history,
)
from bot.slack.services import SlackServices

_log = logging.getLogger(__name__)
IGNORED_SUBTYPES = {"bot_message", "message_changed", "message_deleted", "channel_join", "channel_leave",
                    "thread_broadcast", "message_replied"}


def register(app: AsyncApp, services: SlackServices) -> None:
    assistant = services.assistant
    asking: dict[tuple[str, str], asyncio.Future[bool]] = {}  # whose thread: one look-up at a time per thread

    async def bots_thread(client: AsyncWebClient, event: dict, context: dict) -> bool:
        """`bot_in_thread`, shared by a burst of replies in one thread (each would ask Slack, the first
        reply's answer not being kept yet)."""
        key = (event["channel"], event["thread_ts"])
        if key not in asking:
            asking[key] = asyncio.ensure_future(bot_in_thread(
                client, assistant, event["channel"], event["thread_ts"], context.get("bot_user_id"),
                context.get("bot_id")))
            asking[key].add_done_callback(lambda _: asking.pop(key, None))
        return await asyncio.shield(asking[key])  # a waiter cancelled does not cancel the others' look-up

    async def answer(event: dict, body: dict, client: AsyncWebClient, context: dict) -> None:
        if not await first_time(assistant, event["channel"], event["ts"]):
            return
        text = clean_question(event.get("text", ""))
        if reply := nothing_to_ask(text, EMPTY_QUESTION):
            await ask_for_a_question(client, event, reply)
            return
        history = []
        if event.get("thread_ts"):
            history = await thread_history(client, event["channel"], event["thread_ts"], event["ts"],
                                           context.get("bot_user_id"), context.get("bot_id"))
        await mark_bot_thread(assistant, event["channel"], event.get("thread_ts") or event["ts"])
        await answer_in_thread(services, client, event, text, history, body.get("event_id", ""))

    @app.event("app_mention")
    async def on_mention(event: dict, body: dict, client: AsyncWebClient, context: dict) -> None:
        await answer(event, body, client, context)

    @app.event("message")
    async def on_message(event: dict, body: dict, client: AsyncWebClient, context: dict) -> None:
        if event.get("subtype") in IGNORED_SUBTYPES or event.get("bot_id") or not event.get("user"):
            return
        if event.get("channel_type") == "im":
            await answer(event, body, client, context)
            return
        bot_user = context.get("bot_user_id")
        mentioned = bot_user and f"<@{bot_user}>" in event.get("text", "")
        if event.get("thread_ts") and not mentioned and await bots_thread(client, event, context):
            await answer(event, body, client, context)
