"""When Slack or the models misbehave: fallbacks, retries, limits — and the user always gets a clear reply."""

from __future__ import annotations

import json
import shutil
import time

import httpx
import pytest

from tests.bot.harness import BOT_USER, TEAM, start_bot, wait_for
from tests.bot.slack.test_bot import CHANNEL, answer_text, final_answers, mention
from tests.conftest import HANDBOOK
from tests.fakes.openai_server import FakeOpenAIServer
from tests.fakes.slack_api import SlackApiServer


@pytest.fixture
def slack():
    with SlackApiServer(users={"U0ADMIN01": {}, "U0PLAIN01": {}}) as server:
        yield server
        server.assert_no_rejections()


def run_bot(handbook_index, slack, tmp_path, **settings):  # noqa: F811
    data_dir, index_dir = handbook_index
    return start_bot(data_dir, index_dir, slack.base_url, gate_threshold=0.85,
                     feedback_db=tmp_path / "feedback.sqlite3", **settings)


def test_streaming_unavailable_falls_back_to_a_placeholder_updated_in_place(handbook_index, slack, tmp_path):  # noqa: F811
    slack.fail_next("chat.startStream", error="channel_type_not_supported")
    bot = run_bot(handbook_index, slack, tmp_path)
    try:
        event = mention(slack, "How long must a password be?")
        bot.event(event)
        final = wait_for(lambda: final_answers(slack))[0]
        placeholder = next(c for c in slack.calls_to("chat.postMessage") if c.args.get("thread_ts") == event["ts"])
        assert final.args["ts"] == placeholder.response["ts"]
        assert "14 characters" in json.dumps(final.args["blocks"])
    finally:
        bot.stop()


def test_rate_limited_appends_are_retried_after_retry_after(handbook_index, slack, tmp_path):  # noqa: F811
    slack.fail_next("chat.appendStream", status=429, retry_after=1)
    bot = run_bot(handbook_index, slack, tmp_path)
    try:
        bot.event(mention(slack, "出差吃饭能报多少?"))
        wait_for(lambda: final_answers(slack))
        appends = slack.calls_to("chat.appendStream")
        limited = [c for c in appends if c.status == 429]
        assert limited and appends[-1].status == 200
        after = next(c for c in appends if c.time > limited[0].time)
        assert after.time - limited[0].time >= 0.9, "waited for Retry-After"
    finally:
        bot.stop()


def test_user_stopping_the_stream_stops_the_answer(handbook_index, slack, tmp_path):  # noqa: F811
    with FakeOpenAIServer() as models:
        models.script.chat_reply = "Passwords must be at least 14 characters long [1]. " * 40
        models.script.chat_pieces, models.script.piece_delay = 80, 0.05
        bot = run_bot(handbook_index, slack, tmp_path, answer_base_url=models.base_url, answer_model="m")
        try:
            event = mention(slack, "How long must a password be?")
            bot.event(event)
            start = wait_for(lambda: slack.calls_to("chat.startStream"))[0]
            slack.stop_by_user(CHANNEL, start.response["ts"])
            time.sleep(4)
            assert final_answers(slack) == [] and models.script.disconnects == 1, "generation was cancelled"
        finally:
            bot.stop()


def test_long_answers_are_split_never_truncated(handbook_index, slack, tmp_path):  # noqa: F811
    sentence = "Passwords must be at least 14 characters long and are kept in the company password manager [1]. "
    reply = "\n\n".join(sentence * 8 for _ in range(30))  # ~23,000 characters
    with FakeOpenAIServer() as models:
        models.script.chat_reply, models.script.chat_pieces = reply, 200
        bot = run_bot(handbook_index, slack, tmp_path, answer_base_url=models.base_url, answer_model="m",
                      answer_max_tokens=8000)
        try:
            bot.event(mention(slack, "How long must a password be?"))
            wait_for(lambda: final_answers(slack), timeout=180)
            time.sleep(1)
            assert len(slack.calls_to("chat.startStream")) >= 2, "a streamed message holds at most 12,000 characters"
            pages = [c.args["blocks"] for c in slack.calls_to("chat.update") + slack.calls_to("chat.postMessage")
                     if c.args.get("blocks")]
            sections = [b["text"]["text"] for page in pages for b in page if b["type"] == "section"]
            assert all(len(s) <= 3000 for s in sections) and all(len(page) <= 50 for page in pages)
            assert all(sum(len(b["text"]) for b in page if b["type"] == "markdown") <= 12_000 for page in pages)
            shown = "".join(answer_text(page) for page in pages).replace("\n", "")
            assert shown.count("14 characters") == reply.count("14 characters"), "nothing lost"
        finally:
            bot.stop()


def test_answer_model_down_and_slack_errors_give_short_replies(handbook_index, slack, tmp_path):  # noqa: F811
    bot = run_bot(handbook_index, slack, tmp_path, answer_base_url="http://127.0.0.1:9/v1", answer_model="m",
                  answer_timeout=3, answer_first_token_timeout=3)
    try:
        bot.event(mention(slack, "How long must a password be?"))
        final = wait_for(lambda: final_answers(slack))[0]
        text = json.dumps(final.args["blocks"])
        assert "14 characters" in text and "answer model is unavailable" in text
        slack.fail_next("chat.update", error="fatal_error", status=503, times=5)
        bot.event(mention(slack, "When are the offices open?"))
        time.sleep(8)
        assert httpx.get(f"{bot.url}/health").json()["status"] == "ok", "the process keeps serving"
    finally:
        bot.stop()


def test_no_index_yet_is_explained(slack, tmp_path, shared_data_dir):
    bot = start_bot(shared_data_dir, tmp_path / "empty-index", slack.base_url)
    try:
        event = mention(slack, "anything?")
        bot.event(event)
        reply = wait_for(lambda: [c for c in slack.calls_to("chat.postMessage") if "not been built" in c.args.get("text", "")])
        assert reply[0].args["thread_ts"] == event["ts"]
    finally:
        bot.stop()


def test_direct_messages_and_thread_follow_ups_use_the_conversation(handbook_index, slack, tmp_path):  # noqa: F811
    with FakeOpenAIServer() as models:
        models.script.chat_fn = lambda body: "hotel reimbursement limit per night in London"
        bot = run_bot(handbook_index, slack, tmp_path, rewrite_base_url=models.base_url, rewrite_model="r")
        try:
            dm = slack.seed_message("D0DIRECT1", "How much can I spend on a hotel?", user="U0PLAIN01")
            bot.event({"type": "message", "channel_type": "im", "channel": "D0DIRECT1", "user": "U0PLAIN01",
                       "text": "How much can I spend on a hotel?", "ts": dm, "team": TEAM})
            first = wait_for(lambda: final_answers(slack))[0]
            assert "150 EUR" in json.dumps(first.args["blocks"])
            follow = slack.seed_message("D0DIRECT1", "and in London?", user="U0PLAIN01", thread_ts=dm)
            bot.event({"type": "message", "channel_type": "im", "channel": "D0DIRECT1", "user": "U0PLAIN01",
                       "text": "and in London?", "ts": follow, "thread_ts": dm, "team": TEAM})
            wait_for(lambda: len(final_answers(slack)) == 2)
            rewrite = models.requests_to("/chat/completions")[-1]["body"]["messages"][-1]["content"]
            assert "Q: How much can I spend on a hotel?" in rewrite and "150 EUR" in rewrite
            assert "220 EUR" in json.dumps(final_answers(slack)[1].args["blocks"])
            own = slack.calls_to("chat.startStream")
            assert {c.args["thread_ts"] for c in own} == {dm}
        finally:
            bot.stop()


def test_channel_follow_up_without_mention_in_a_bot_thread(handbook_index, slack, tmp_path):  # noqa: F811
    bot = run_bot(handbook_index, slack, tmp_path)
    try:
        first = mention(slack, "How long must a password be?")
        bot.event(first)
        wait_for(lambda: final_answers(slack))
        follow = slack.seed_message(CHANNEL, "where do I store it?", user="U0PLAIN01", thread_ts=first["ts"])
        bot.event({"type": "message", "channel_type": "channel", "channel": CHANNEL, "user": "U0PLAIN01",
                   "text": "where do I store it?", "ts": follow, "thread_ts": first["ts"], "team": TEAM})
        wait_for(lambda: len(final_answers(slack)) == 2)
        other = slack.seed_message(CHANNEL, "unrelated chatter", user="U0PLAIN01")
        bot.event({"type": "message", "channel_type": "channel", "channel": CHANNEL, "user": "U0PLAIN01",
                   "text": "unrelated chatter", "ts": other, "team": TEAM})
        time.sleep(2)
        assert len(slack.calls_to("chat.startStream")) == 2, "plain channel chatter is not answered"
    finally:
        bot.stop()


def test_assistant_threads_greet_suggest_and_show_status(handbook_index, slack, tmp_path):  # noqa: F811
    bot = run_bot(handbook_index, slack, tmp_path)
    try:
        thread = {"user_id": "U0PLAIN01", "context": {}, "channel_id": "D0ASSIST1", "thread_ts": "1700000000.000100"}
        bot.event({"type": "assistant_thread_started", "assistant_thread": thread, "event_ts": "1700000000.000200"})
        wait_for(lambda: slack.calls_to("assistant.threads.setSuggestedPrompts"))
        assert slack.calls_to("chat.postMessage")[0].args["thread_ts"] == "1700000000.000100"
        prompts = slack.calls_to("assistant.threads.setSuggestedPrompts")[0].args["prompts"]
        if isinstance(prompts, str):
            prompts = json.loads(prompts)
        asked = " ".join(p["message"] for p in prompts)
        titles = ("中国区差旅报销制度", "年假与请假制度", "Travel and Expense Policy", "New Employee Onboarding Guide")
        assert len(prompts) == 4 and any(title in asked for title in titles), "prompts about this index's documents"
        assert any("\u4e00" <= ch <= "\u9fff" for ch in asked) and "What are the key points" in asked
        assert all(len(p["title"]) <= 40 for p in prompts)
        ts = slack.seed_message("D0ASSIST1", "出差吃饭能报多少?", user="U0PLAIN01", thread_ts="1700000000.000100")
        bot.event({"type": "message", "channel_type": "im", "channel": "D0ASSIST1", "user": "U0PLAIN01",
                   "text": "出差吃饭能报多少?", "ts": ts, "thread_ts": "1700000000.000100", "team": TEAM,
                   "assistant_thread": {"action_token": "x"}})
        wait_for(lambda: final_answers(slack))
        statuses = [c.args["status"] for c in slack.calls_to("assistant.threads.setStatus")]
        assert statuses == ["is searching the knowledge base…"]
    finally:
        bot.stop()


def test_reindex_picks_up_new_documents_while_answers_continue(slack, tmp_path, shared_data_dir):
    docs = tmp_path / "docs"
    docs.mkdir()
    shutil.copy(HANDBOOK / "travel-expenses.md", docs)
    from rag.knowledge_base import KnowledgeBase
    from rag.config import Settings

    KnowledgeBase(Settings(data_dir=shared_data_dir, _env_file=None), tmp_path / "index").refresh([docs])
    bot = start_bot(shared_data_dir, tmp_path / "index", slack.base_url)
    try:
        (docs / "parking.md").write_text("# Parking\n\nParking spaces are assigned by lottery every quarter.\n",
                                         encoding="utf-8")
        assert "Reindexing" in bot.command("/reindex", "U0ADMIN01").text
        bot.event(mention(slack, "How much is the hotel limit?"))
        done = wait_for(lambda: [c for c in slack.calls_to("chat.update") if "Reindex finished" in c.args.get("text", "")])
        assert "`parking.md`" in done[0].args["text"] and "Added 1" in done[0].args["text"]
        progress = slack.calls_to("chat.postMessage")
        assert any("Reindexing" in c.args.get("text", "") for c in progress)
        wait_for(lambda: final_answers(slack))
        bot.event(mention(slack, "How is parking assigned?"))
        wait_for(lambda: len(final_answers(slack)) == 2)
        assert "lottery" in json.dumps(final_answers(slack)[1].args["blocks"])
    finally:
        bot.stop()


def test_streaming_breaking_mid_answer_continues_in_a_placeholder_and_ends_complete(handbook_index, slack, tmp_path):  # noqa: F811
    reply = "Passwords must be at least 14 characters long [1]. They are stored in the password manager [1]. " * 3
    with FakeOpenAIServer() as models:
        models.script.chat_reply, models.script.chat_pieces, models.script.piece_delay = reply, 24, 0.1
        slack.fail_next("chat.appendStream", error="fatal_error")
        bot = run_bot(handbook_index, slack, tmp_path, answer_base_url=models.base_url, answer_model="m")
        try:
            event = mention(slack, "How long must a password be?")
            bot.event(event)
            final = wait_for(lambda: final_answers(slack))[0]
            stream_ts = slack.calls_to("chat.startStream")[0].response["ts"]
            placeholder = next(c for c in slack.calls_to("chat.postMessage") if c.args.get("thread_ts") == event["ts"])
            assert final.args["ts"] == stream_ts, "the first message gets the finished answer"
            deleted = wait_for(lambda: slack.calls_to("chat.delete"), timeout=10)
            assert [c.args["ts"] for c in deleted] == [placeholder.response["ts"]]
            text = answer_text(final.args["blocks"])
            assert text.count("14 characters") == 3
        finally:
            bot.stop()


def test_two_bot_processes_sharing_redis_answer_a_retried_event_once(handbook_index, slack, tmp_path,  # noqa: F811
                                                                     redis_process):
    redis = redis_process
    first = run_bot(handbook_index, slack, tmp_path, redis_url=redis.url)
    second = run_bot(handbook_index, slack, tmp_path / "b", redis_url=redis.url)
    try:
        assert first.services.deliveries.backend == "redis"
        event = mention(slack, "How long must a password be?")
        assert first.event(event, event_id="EvSHARED0001").status_code == 200
        assert second.event(event, event_id="EvSHARED0001", headers={"X-Slack-Retry-Num": "1"}).status_code == 200
        wait_for(lambda: final_answers(slack))
        time.sleep(2)
        assert len(slack.calls_to("chat.startStream")) == 1
    finally:
        first.stop()
        second.stop()
        redis.stop()
