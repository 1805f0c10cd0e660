"""Turn Slack messages into questions: who asked, where to answer, and the thread so far."""

from __future__ import annotations

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.answering import Question, clean_question
from bot.dedup import Dedup
from cache import cache_key

QUESTION_TTL = 24 * 3600
BOT_THREAD_TTL = 30 * 24 * 3600


async def first_time(dedup: Dedup, channel: str, ts: str) -> bool:
    """Slack sends `app_mention` and `message` for one mention: only the first handler answers."""
    return await dedup.first(cache_key("question", channel, ts), QUESTION_TTL)


async def mark_bot_thread(dedup: Dedup, channel: str, thread_ts: str) -> None:
    await dedup.mark("bot-thread", cache_key("bot-thread", channel, thread_ts), BOT_THREAD_TTL)


async def bot_in_thread(client: AsyncWebClient, dedup: Dedup, channel: str, thread_ts: str,
                        bot_user_id: str | None, bot_id: str | None) -> bool:
    if await dedup.marked("bot-thread", cache_key("bot-thread", channel, thread_ts)):
        return True
    try:  # threads answered before a restart, or by another instance
        replies = await client.conversations_replies(channel=channel, ts=thread_ts, limit=50)
    except SlackApiError:
        return False
    return any(_is_bot(m, bot_user_id, bot_id) for m in replies.get("messages", []))


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


def question_from(event: dict, text: str, history: list[tuple[str, str]], event_id: str) -> Question:
    return Question(
        text=text,
        channel=event["channel"],
        thread_ts=event.get("thread_ts") or event["ts"],
        user=event.get("user", ""),
        team=event.get("team") or event.get("user_team"),
        history=history,
        event_id=event_id,
    )
