"""Slack's assistant threads (the AI app pane): greeting, suggested prompts, a status line while searching."""

from __future__ import annotations

import logging

from slack_bolt.async_app import AsyncApp
from slack_bolt.context.say.async_say import AsyncSay
from slack_bolt.context.set_status.async_set_status import AsyncSetStatus
from slack_bolt.context.set_suggested_prompts.async_set_suggested_prompts import AsyncSetSuggestedPrompts
from slack_bolt.middleware.assistant.async_assistant import AsyncAssistant
from slack_sdk.web.async_client import AsyncWebClient

from bot.core.answering import GREETING, nothing_to_ask
from bot.core.examples import example_questions
from bot.core.assistant import Manifest
from bot.slack.conversation import (
    EMPTY_QUESTION,
    answer_in_thread,
    ask_for_a_question,
    clean_question,
    first_time,
    thread_history,
)
from bot.slack.places import private_scope
from bot.slack.services import SlackServices

_log = logging.getLogger(__name__)

PROMPT_TITLE_CHARS = 40  # the pane shows short titles; the full question is the message


def suggested_prompts(manifest: Manifest | None) -> list[dict[str, str]]:
    """Questions about this knowledge base's own documents (none before the first index)."""
    if manifest is None:
        return []
    prompts = []
    for question in example_questions(manifest):
        title = question if len(question) <= PROMPT_TITLE_CHARS else question[: PROMPT_TITLE_CHARS - 1] + "…"
        prompts.append({"title": title, "message": question})
    return prompts


def register(app: AsyncApp, services: SlackServices) -> None:
    pane = AsyncAssistant()

    @pane.thread_started
    async def started(payload: dict, say: AsyncSay, set_suggested_prompts: AsyncSetSuggestedPrompts) -> None:
        await say(GREETING)
        thread = payload.get("assistant_thread") or {}
        # Prompts name documents: only those the user may be answered from in this (direct) conversation.
        scope = await private_scope(services.assistant, thread.get("user_id", ""), thread.get("channel_id", ""))
        prompts = suggested_prompts(await services.assistant.manifest_for(scope))
        if prompts:
            await set_suggested_prompts(prompts=prompts, title="Try one of these")

    @pane.user_message
    async def user_message(payload: dict, body: dict, client: AsyncWebClient, context: dict,
                           set_status: AsyncSetStatus) -> None:
        if not await first_time(services.assistant, payload["channel"], payload["ts"]):
            return
        text = clean_question(payload.get("text", ""))
        # only a file or a mention, or "thanks!": nothing to search for
        if reply := nothing_to_ask(text, EMPTY_QUESTION):
            await ask_for_a_question(client, payload, reply)
            return
        await set_status("is searching the knowledge base…")
        history = await thread_history(client, payload["channel"], payload["thread_ts"], payload["ts"],
                                       context.get("bot_user_id"), context.get("bot_id"))
        # Slack clears the status when the reply arrives.
        await answer_in_thread(services, client, payload, text, history, body.get("event_id", ""))

    app.use(pane)
