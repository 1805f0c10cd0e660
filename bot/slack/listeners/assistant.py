"""Slack's assistant threads (the AI app pane): greeting, suggested prompts, a status line while searching."""

from __future__ import annotations

import logging

from slack_bolt.async_app import AsyncApp
from slack_bolt.context.say.async_say import AsyncSay
from slack_bolt.context.set_status.async_set_status import AsyncSetStatus
from slack_bolt.context.set_suggested_prompts.async_set_suggested_prompts import AsyncSetSuggestedPrompts
from slack_bolt.middleware.assistant.async_assistant import AsyncAssistant
from slack_sdk.web.async_client import AsyncWebClient

from bot.core.answering import GREETING
from bot.slack.listeners.conversation import answer_in_thread, clean_question, first_time, thread_history
from bot.slack.services import SlackServices

_log = logging.getLogger(__name__)

SUGGESTED_PROMPTS = [
    {"title": "Meal allowance on trips", "message": "How much is the daily meal allowance on a business trip?"},
    {"title": "出差吃饭能报多少", "message": "出差吃饭能报多少?"},
    {"title": "Annual leave", "message": "How many days of annual leave do I get?"},
    {"title": "Lost laptop", "message": "What do I do if I lose my laptop?"},
]


def register(app: AsyncApp, services: SlackServices) -> None:
    assistant = AsyncAssistant()

    @assistant.thread_started
    async def started(say: AsyncSay, set_suggested_prompts: AsyncSetSuggestedPrompts) -> None:
        await say(GREETING)
        await set_suggested_prompts(prompts=SUGGESTED_PROMPTS, title="Try one of these")

    @assistant.user_message
    async def user_message(payload: dict, body: dict, client: AsyncWebClient, context: dict,
                           set_status: AsyncSetStatus) -> None:
        if not await first_time(services.dedup, payload["channel"], payload["ts"]):
            return
        await set_status("is searching the knowledge base…")
        history = await thread_history(client, payload["channel"], payload["thread_ts"], payload["ts"],
                                       context.get("bot_user_id"), context.get("bot_id"))
        # Slack clears the status when the reply arrives.
        await answer_in_thread(services, client, payload, clean_question(payload.get("text", "")), history,
                               body.get("event_id", ""))

    app.use(assistant)
