"""ThreadReply (bot/slack/streaming.py) against the local Slack Web API (tests/fakes/slack_api.py): what lands
in the thread while an answer streams, when streaming is unavailable or breaks, when the user presses stop,
when the answer is finished or failed, and how Slack's errors reach the core."""

from __future__ import annotations

import asyncio
import logging
import socket

import pytest
from slack_sdk.web.async_client import AsyncWebClient

from bot.core.answering import AnswerStopped, DeliveryError
from bot.slack.blocks import answer_blocks, plain_summary
from bot.slack.streaming import ThreadReply
from rag.types import Answer, Chunk, Citation

CHANNEL, USER, TEAM = "C0GENERAL", "U0PLAIN01", "T0FAKE001"
TOKEN = "xoxb-unit-test-secret-4711"
MEALS = "Meals are reimbursed up to 45 EUR a day [1]."


def replying(slack, base_url: str | None = None, **options) -> ThreadReply:
    """A reply in the thread of a question just asked in the channel."""
    thread = slack.seed_message(CHANNEL, "How much for meals?", user=USER)
    client = AsyncWebClient(token=TOKEN, base_url=base_url or slack.base_url)
    return ThreadReply(client, CHANNEL, thread, user_id=USER, team_id=TEAM, **options)


def answer(text: str = MEALS, citations: int = 1) -> Answer:
    cited = [Citation(n, Chunk(f"c{n}", "travel.md", f"Travel policy {n}", ("Meals",), "Meals: 45 EUR.", 0,
                               14, None, None, "3", "2026-11-02")) for n in range(1, citations + 1)]
    return Answer("How much for meals?", text, cited, False, "generative")


def bot_messages(slack, reply: ThreadReply) -> list[dict]:
    return [m for m in slack.thread(CHANNEL, reply.thread_ts) if m.get("bot_id")]


def text_of(slack, ts: str) -> str:
    return slack.final_text(CHANNEL, ts)


def streamed(slack, ts: str) -> str:
    """Everything streamed into a message, whatever replaced it afterwards."""
    return "".join(c.get("text", "") for c in slack.chunks(CHANNEL, ts))


# ------------------------------------------------------------------------------------------ streaming


def test_the_first_text_shows_at_once_and_the_rest_every_buffer_chars(slack):
    reply = replying(slack, buffer_chars=20, flush_seconds=60)

    async def stream() -> list[str]:
        seen = []
        for piece in ("Meals ", "are up to ", "45 EUR a day."):
            await reply.append(piece)
            seen.append(text_of(slack, reply.message_ts[0]))
        return seen

    assert asyncio.run(stream()) == ["Meals ", "Meals ", "Meals are up to 45 EUR a day."]
    assert slack.stream_state(CHANNEL, reply.message_ts[0]) == "streaming"


def test_text_waiting_in_the_buffer_shows_after_flush_seconds(slack):
    reply = replying(slack, buffer_chars=1000, flush_seconds=1.5)

    async def stream() -> list[str]:
        await reply.append("Meals ")
        await reply.append("are ")
        waiting = text_of(slack, reply.message_ts[0])
        await asyncio.sleep(1.6)
        await reply.append("45 EUR.")
        return [waiting, text_of(slack, reply.message_ts[0])]

    assert asyncio.run(stream()) == ["Meals ", "Meals are 45 EUR."]


def test_a_greater_than_sign_continuing_a_line_is_no_quote_but_one_starting_a_line_is(slack):
    reply = replying(slack, buffer_chars=1)

    async def stream() -> None:
        for piece in ("2 ", "> 1\n", "> quoted"):
            await reply.append(piece)

    asyncio.run(stream())
    assert [c["text"] for c in slack.chunks(CHANNEL, reply.message_ts[0])] == ["2 ", "&gt; 1\n", "> quoted"]


def test_a_streamed_message_holds_at_most_12000_characters_then_another_begins(slack):
    reply = replying(slack, buffer_chars=1)
    pieces = [f"{n}" * 3000 for n in range(5)]

    async def stream() -> None:
        for piece in pieces:
            await reply.append(piece)

    asyncio.run(stream())
    assert len(reply.message_ts) == 2 and len(slack.calls_to("chat.startStream")) == 2
    assert [text_of(slack, ts) for ts in reply.message_ts] == ["".join(pieces[:4]), pieces[4]]
    assert slack.stream_state(CHANNEL, reply.message_ts[0]) == "stopped"


# ------------------------------------------------------------------------------------------ finishing


def test_the_finished_answer_replaces_the_streamed_text_in_the_same_message(slack):
    reply = replying(slack, buffer_chars=1000, flush_seconds=60)
    final = answer()

    async def run() -> None:
        await reply.append("Meals are reimbursed ")
        await reply.append("up to 45 EUR a day [1].")  # still in the buffer when the answer is finished
        await reply.finish(final, "a1")

    asyncio.run(run())
    [message] = bot_messages(slack, reply)
    assert message["blocks"] == answer_blocks(final, "a1") and message["text"] == plain_summary(MEALS)
    assert streamed(slack, message["ts"]) == MEALS, "the whole draft was streamed before it was replaced"
    assert slack.stream_state(CHANNEL, message["ts"]) == "stopped"


def test_an_answer_too_long_for_one_message_continues_in_the_thread(slack):
    reply = replying(slack)
    final = answer(citations=60)  # 63 blocks: Slack takes 50 a message

    async def run() -> None:
        await reply.append(MEALS)
        await reply.finish(final, "a1")

    asyncio.run(run())
    messages = bot_messages(slack, reply)
    assert [m["ts"] for m in messages] == reply.message_ts and len(messages) == 2
    assert [b for m in messages for b in m["blocks"]] == answer_blocks(final, "a1"), "whole, in order"
    assert all(m["text"] == plain_summary(MEALS) for m in messages)


def test_a_failure_replaces_the_draft_with_a_short_message(slack):
    reply = replying(slack, buffer_chars=1)

    async def run() -> None:
        for n in range(5):  # two streamed messages
            await reply.append(f"{n}" * 3000)
        await reply.fail("Sorry, something went wrong while answering.")

    asyncio.run(run())
    first, second = reply.message_ts
    assert text_of(slack, first) == "Sorry, something went wrong while answering."
    assert not slack.message(CHANNEL, first).get("blocks")
    assert [c.args["ts"] for c in slack.calls_to("chat.delete")] == [second], "the rest of the draft goes"
    assert {slack.stream_state(CHANNEL, ts) for ts in reply.message_ts} == {"stopped"}


# -------------------------------------------------------------------------------------------- fallback


def test_without_streaming_a_placeholder_is_updated_at_most_once_per_fallback_seconds(slack):
    slack.fail_next("chat.startStream", "channel_type_not_supported")
    reply = replying(slack, buffer_chars=5, fallback_seconds=1.5)
    sentence = "Meals are 45 EUR. "

    async def run() -> list[str]:
        for _ in range(10):
            await reply.append(sentence)
        early = text_of(slack, reply.message_ts[0])
        await asyncio.sleep(1.6)
        await reply.append("Done.")
        late = text_of(slack, reply.message_ts[0])
        await reply.finish(answer(), "a1")
        return [early, late]

    assert asyncio.run(run()) == [sentence, sentence * 10 + "Done."]
    assert len(slack.calls_to("chat.update")) == 2, "one after fallback_seconds, then the finished answer"
    [message] = bot_messages(slack, reply)
    assert message["blocks"] == answer_blocks(answer(), "a1")


def test_a_stream_that_expires_mid_answer_continues_in_a_placeholder(slack):
    reply = replying(slack, buffer_chars=1)

    async def run() -> list[str]:
        await reply.append("Meals are ")
        slack.expire_stream(CHANNEL, reply.message_ts[0])
        await reply.append("up to 45 EUR ")
        await reply.append("a day [1].")
        drafts = [text_of(slack, ts) for ts in reply.message_ts]
        await reply.finish(answer(), "a1")
        return drafts

    # The text Slack refused to stream opens the placeholder; the rest waits for fallback_seconds.
    assert asyncio.run(run()) == ["Meals are ", "up to 45 EUR "]
    first, placeholder = (m["ts"] for m in bot_messages(slack, reply))
    assert slack.message(CHANNEL, first)["blocks"] == answer_blocks(answer(), "a1")
    assert [c.args["ts"] for c in slack.calls_to("chat.delete")] == [placeholder], "the placeholder goes"


def test_the_user_pressing_stop_stops_the_answer_where_it_is(slack):
    reply = replying(slack, buffer_chars=1)

    async def run() -> None:
        await reply.append("Meals are ")
        slack.stop_by_user(CHANNEL, reply.message_ts[0])
        await reply.append("up to 45 EUR.")

    with pytest.raises(AnswerStopped):
        asyncio.run(run())
    assert [m["text"] for m in bot_messages(slack, reply)] == ["Meals are "], "no placeholder continues it"


# ------------------------------------------------------------------------------------------ delivery


def test_slack_refusing_the_finished_answer_is_a_delivery_error_with_slacks_reason(slack, caplog):
    slack.fail_next("chat.update", "invalid_blocks")
    reply = replying(slack, buffer_chars=1)

    async def run() -> None:
        await reply.append(MEALS)
        await reply.finish(answer(), "a1")

    with caplog.at_level(logging.DEBUG), pytest.raises(DeliveryError) as failed:
        asyncio.run(run())
    assert failed.value.reason == str(failed.value) == "invalid_blocks"
    [message] = bot_messages(slack, reply)
    assert message["text"] == MEALS and not message.get("blocks"), "the whole draft stays readable"
    assert TOKEN not in repr(failed.value) and not any(TOKEN in r.getMessage() for r in caplog.records)


def test_unreachable_slack_is_a_delivery_error_naming_the_failure(slack, caplog):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{probe.getsockname()[1]}/api/"  # nothing listens once it is closed
    reply = replying(slack, base_url=closed)

    with caplog.at_level(logging.DEBUG), pytest.raises(DeliveryError) as failed:
        asyncio.run(reply.append(MEALS))
    assert failed.value.reason == "ClientConnectorError talking to Slack"
    assert "Traceback" not in str(failed.value) and TOKEN not in repr(failed.value)
    assert not any(TOKEN in r.getMessage() for r in caplog.records)
