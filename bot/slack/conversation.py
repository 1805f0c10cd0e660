"""Turn Slack messages into questions: who asked, where to answer, and the thread so far."""

from __future__ import annotations

import re

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.core.answering import ASK_FOR_A_QUESTION, Question
from bot.core.assistant import Assistant
from bot.slack.blocks import NO_INDEX
from bot.slack.places import scope_in
from bot.slack.services import SlackServices
from bot.slack.streaming import ThreadReply
from cache import cache_key

QUESTION_TTL = 24 * 3600
BOT_THREAD_TTL = 30 * 24 * 3600
NOT_BOT_THREAD_TTL = 600
BOT_THREAD, NOT_BOT_THREAD = b"1", b"0"
EMPTY_QUESTION = f"{ASK_FOR_A_QUESTION} :wave:"
_MENTION = re.compile(r"<@[UW][A-Z0-9]+(?:\|[^>]*)?>")


def clean_question(text: str) -> str:
    """The question without @-mentions and Slack's link/formatting wrappers."""
    text = _MENTION.sub(" ", text or "")
    text = re.sub(r"<(https?://[^|>]+)\|([^>]+)>", r"\2", text)
    text = re.sub(r"<(https?://[^>]+)>", r"\1", text)
    return " ".join(text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&").split())


async def first_time(assistant: Assistant, channel: str, ts: str) -> bool:
    """Slack sends `app_mention` and `message` for one mention: only the first handler answers."""
    return await assistant.first_delivery("question", channel, ts, ttl=QUESTION_TTL)


async def mark_bot_thread(assistant: Assistant, channel: str, thread_ts: str) -> None:
    """The bot answers in this thread: from now on its unmarked replies are follow-ups (on every replica)."""
    await assistant.write_mark("bot-thread", cache_key("bot-thread", channel, thread_ts), BOT_THREAD, BOT_THREAD_TTL)


async def bot_in_thread(client: AsyncWebClient, assistant: Assistant, channel: str, thread_ts: str,
                        bot_user_id: str | None, bot_id: str | None) -> bool:
    """Whether the bot answered in this thread. Slack is asked once a thread (Tier 3 rate limits, and a busy
    channel has many threads); its answer is kept in the shared store — a "no" for NOT_BOT_THREAD_TTL, and
    `mark_bot_thread` overwrites it the moment the bot answers there."""
    key = cache_key("bot-thread", channel, thread_ts)
    known = await assistant.read_mark("bot-thread", key)
    if known is not None:
        return known == BOT_THREAD
    try:  # threads answered before a restart, or by another instance
        replies = await client.conversations_replies(channel=channel, ts=thread_ts, limit=50)
    except SlackApiError:
        return False
    if any(_is_bot(m, bot_user_id, bot_id) for m in replies.get("messages", [])):
        await mark_bot_thread(assistant, channel, thread_ts)
        return True
    # Not over a mark the bot set while Slack was being asked (it began answering here meanwhile).
    if not await assistant.write_mark_if_absent(key, NOT_BOT_THREAD, NOT_BOT_THREAD_TTL):
        return await assistant.read_mark("bot-thread", key) == BOT_THREAD
    return False


def _is_bot(message: dict, bot_user_id: str | None, bot_id: str | None) -> bool:
    return bool((bot_id and message.get("bot_id") == bot_id) or (bot_user_id and message.get("user") == bot_user_id))


async def thread_history(client: AsyncWebClient, channel: str, thread_ts: str, current_ts: str,
                         bot_user_id: str | None, bot_id: str | None, turns: int = 3) -> list[tuple[str, str]]:
    """Earlier (question, answer) pairs of a thread, oldest first."""
    try:
        replies = await client.conversations_replies(channel=channel, ts=thread_ts, limit=100)
    except SlackApiError:
        return []
    pairs: list[tuple[str, str]] = []
    pending: str | None = None
    for message in replies.get("messages", []):
        if message.get("ts") == current_ts:
            break
        text = clean_question(message.get("text", ""))
        if _is_bot(message, bot_user_id, bot_id):
            if pending and text:
                pairs.append((pending, text))
            pending = None
        elif text:
            pending = text
    return pairs[-turns:]


async def ask_for_a_question(client: AsyncWebClient, event: dict, reply: str) -> None:
    """The reply to a message with nothing to answer (e.g. a bare mention, or thanks under an answer)."""
    await client.chat_postMessage(channel=event["channel"], thread_ts=event.get("thread_ts") or event["ts"],
                                  text=reply)


async def answer_in_thread(services: SlackServices, client: AsyncWebClient, event: dict, text: str,
                           history: list[tuple[str, str]], event_id: str) -> None:
    """Answer `text`, asked in `event` (a message or an assistant thread's message), in its thread."""
    settings = services.settings
    reply = ThreadReply(client, event["channel"], event.get("thread_ts") or event["ts"], user_id=event.get("user"),
                        team_id=event.get("team") or event.get("user_team"),
                        buffer_chars=settings.stream_buffer_chars, fallback_seconds=settings.fallback_update_seconds)
    user = event.get("user", "")
    assistant = services.assistant
    question = Question(text=text, conversation=event["channel"], user=user, history=history,
                        event_id=event_id, platform="slack", scope=await scope_in(assistant, event["channel"], user))
    await assistant.ask(question, reply, no_index_message=NO_INDEX)
