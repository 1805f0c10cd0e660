"""Teams when things go wrong — the connector refusing or failing, the model or Redis down, no index yet,
bad requests: a short message in the conversation where one can be posted, never a stack trace, and the
process keeps serving."""

from __future__ import annotations

import logging

import httpx
import pytest

from tests.bot.harness import wait_for
from tests.bot.teams_ui import activity, post, start_teams_bot
from tests.processes import free_port

CHANNEL = "19:general@thread.tacv2;messageid=1700000000002"


def ask_in_channel(bot, connector, question: str, channel: str = CHANNEL) -> None:
    asked = activity(connector, question, conversation=channel, kind="channel", mention=True)
    assert post(bot, asked).status_code == 202


def test_a_rate_limited_or_failing_connector_is_retried(handbook_index, tmp_path, connector):
    bot = start_teams_bot(handbook_index, tmp_path)
    try:
        connector.fail_next("POST", 429, retry_after=1, kind="message")
        connector.fail_next("POST", 503, kind="message")
        ask_in_channel(bot, connector, "How long must a password be?")
        final = wait_for(lambda: connector.final_messages(CHANNEL))[0]
        assert "14 characters" in final.text
        attempts = [c for c in connector.calls if c.type == "message"]
        assert [c.status for c in attempts] == [429, 503, 201]
        assert attempts[1].time - attempts[0].time >= 0.9, "waited for Retry-After"
    finally:
        bot.stop()


# A channel thread's id ends in its first message's id, a time in ms: "403" in it (or in the connector's
# port) once made the SDK take a failed final message for a user's stop and say nothing.
@pytest.mark.parametrize("channel", [CHANNEL, "19:general@thread.tacv2;messageid=1764940300002"])
def test_a_final_message_the_connector_keeps_refusing_is_explained_and_the_bot_keeps_serving(
        handbook_index, tmp_path, connector, caplog, channel):
    bot = start_teams_bot(handbook_index, tmp_path)
    try:
        connector.fail_next("POST", 500, times=4, kind="message")  # the first try and every retry
        with caplog.at_level(logging.ERROR, logger="bot.core.answering"):
            ask_in_channel(bot, connector, "How long must a password be?", channel)
            note = wait_for(lambda: connector.messages_in(channel))[0]
        assert note.text.startswith("Sorry, I could not put the finished answer in place")
        assert "500" not in note.text and "Traceback" not in note.text
        assert "HTTP 500 from the Bot Connector" in caplog.text and "injected" not in caplog.text
        assert httpx.get(f"{bot.url}/health").json()["status"] == "ok"
        ask_in_channel(bot, connector, "When are the offices open?", channel)
        wait_for(lambda: connector.final_messages(channel))
    finally:
        bot.stop()


def test_the_answer_model_or_redis_down_still_gives_a_cited_answer(handbook_index, tmp_path, connector):
    bot = start_teams_bot(handbook_index, tmp_path, answer_base_url="http://127.0.0.1:9/v1", answer_model="m",
                          answer_timeout=3, answer_first_token_timeout=3,
                          redis_url=f"redis://:s3cret@127.0.0.1:{free_port()}/0")
    try:
        assert post(bot, activity(connector, "How long must a password be?")).status_code == 202
        final = wait_for(lambda: connector.final_messages("a:personal-chat-1"), timeout=60)[0]
        assert "14 characters" in final.text and "answer model is unavailable" in final.text and final.citations
    finally:
        bot.stop()


def test_no_index_yet_is_explained(connector, tmp_path, shared_data_dir):
    bot = start_teams_bot((shared_data_dir, tmp_path / "empty-index"), tmp_path)
    try:
        post(bot, activity(connector, "anything?"))
        reply = wait_for(lambda: connector.messages_in("a:personal-chat-1"))[0]
        assert reply.text == ("The knowledge base has not been built yet — an admin can build it with the "
                              "`reindex` command.")
    finally:
        bot.stop()


def test_bad_requests_get_a_clear_400(handbook_index, tmp_path, connector):
    bot = start_teams_bot(handbook_index, tmp_path)
    try:
        for body in (b"not json", b'{"type": "message"}', b'{"type": 5, "conversation": {"id": 1}}'):
            response = post(bot, body)
            assert response.status_code == 400 and "Traceback" not in response.text, (body, response.text)
        assert httpx.get(f"{bot.url}/health").json()["status"] == "ok"
    finally:
        bot.stop()
