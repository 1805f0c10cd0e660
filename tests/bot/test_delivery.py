"""Every answer finishes and every failure is told: whatever breaks after the first streamed byte (the
feedback database, Slack's connection, a footnote too long for Slack) ends in the finished message or a short
notice, and the stream is stopped. Also: rate limits lend the answer slot, thread ownership is asked once,
an empty assistant message gets the friendly prompt."""

from __future__ import annotations

import json
import logging
import sqlite3
import time

import pytest

from rag.knowledge_base import KnowledgeBase
from rag.config import Settings
from tests.bot.harness import TEAM, one_page_index, start_bot, wait_for
from tests.bot.slack_ui import open_home, published
from tests.bot.slack.test_bot import CHANNEL, answer_text, block_texts, mention
from tests.conftest import build
from tests.fakes.openai_server import FakeOpenAIServer
from tests.fakes.slack_api import SECTION_TEXT_LIMIT, SlackApiServer

PASSWORDS = "Passwords must be at least 14 characters long [1]. They are kept in the password manager [1]."


@pytest.fixture
def slack():
    with SlackApiServer(users={"U0ADMIN01": {}, "U0PLAIN01": {}}) as server:
        yield server
        server.assert_no_rejections()


def run_bot(index, slack, tmp_path, **settings):
    data_dir, index_dir = index
    return start_bot(data_dir, index_dir, slack.base_url, **{"gate_threshold": 0.85,
                                                             "feedback_db": tmp_path / "feedback.sqlite3", **settings})


def finished(slack: SlackApiServer) -> list:
    """chat.update calls that put a finished answer (its footnotes) in place, with or without votes."""
    return [c for c in slack.calls_to("chat.update")
            if any(b.get("type") == "divider" for b in c.args.get("blocks") or [])]


def stream_ts(slack: SlackApiServer) -> str:
    return slack.calls_to("chat.startStream")[0].response["ts"]


# ---------------------------------------------------------------------------------- item 9: after the first byte


def test_a_locked_feedback_database_still_ends_in_the_finished_answer(handbook_index, slack, tmp_path, caplog):
    feedback_db = tmp_path / "feedback.sqlite3"
    bot = run_bot(handbook_index, slack, tmp_path, feedback_db=feedback_db)
    holder = sqlite3.connect(feedback_db, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")  # another process holds the database: every write waits, then fails
    try:
        with caplog.at_level(logging.ERROR, logger="bot.core.answering"):
            bot.event(mention(slack, "How long must a password be?"))
            final = wait_for(lambda: finished(slack), timeout=60)[0]
    finally:
        holder.execute("ROLLBACK")
        holder.close()
        bot.stop()
    assert "14 characters" in answer_text(final.args["blocks"])
    assert final.args["ts"] == stream_ts(slack) and slack.stream_state(CHANNEL, stream_ts(slack)) == "stopped"
    assert not any(b["type"] == "context_actions" for b in final.args["blocks"]), "no votes on an unrecorded answer"
    assert any("could not record the answer for feedback" in r.getMessage() and "locked" in r.getMessage()
               for r in caplog.records)


def test_slack_dropping_the_connection_on_append_still_ends_in_the_finished_answer(handbook_index, slack, tmp_path):
    with FakeOpenAIServer() as models:
        models.script.chat_reply, models.script.chat_pieces, models.script.piece_delay = PASSWORDS * 3, 24, 0.05
        slack.drop_next("chat.appendStream", times=2)  # slack_sdk retries a dropped connection once
        bot = run_bot(handbook_index, slack, tmp_path, answer_base_url=models.base_url, answer_model="m")
        try:
            event = mention(slack, "How long must a password be?")
            bot.event(event)
            final = wait_for(lambda: finished(slack))[0]
        finally:
            bot.stop()
    assert [c.status for c in slack.calls_to("chat.appendStream")][:2] == [0, 0], "the connection was dropped"
    assert slack.stream_state(CHANNEL, stream_ts(slack)) == "stopped"
    assert final.args["ts"] == stream_ts(slack) and answer_text(final.args["blocks"]).count("14 characters") == 3
    replies = [m for m in slack.thread(CHANNEL, event["ts"]) if m.get("bot_id")]
    assert not any("went wrong" in m["text"] for m in replies)


# ------------------------------------------------------------------------- item 8: footnotes within Slack's limits

LONG_TITLE = "Travel & <Expenses> & Allowances " * 70  # ~2,300 characters, ~3,000 escaped
LONG_HEADING = "Meals & <Lunch> " * 40


@pytest.fixture(scope="module")
def long_title_index(shared_data_dir, tmp_path_factory):
    docs = tmp_path_factory.mktemp("long-title-docs")
    (docs / "lunch.md").write_text(
        f"---\ntitle: {LONG_TITLE.strip()}\n---\n\n# {LONG_TITLE.strip()}\n\n## {LONG_HEADING.strip()}\n\n"
        "Lunch on a business trip is reimbursed up to 30 EUR per day with a receipt.\n", encoding="utf-8")
    index_dir = tmp_path_factory.mktemp("long-title-index")
    build(KnowledgeBase(Settings(data_dir=shared_data_dir, _env_file=None), index_dir), [docs])
    return shared_data_dir, index_dir


def test_a_footnote_longer_than_a_section_is_cut_and_the_answer_finishes(long_title_index, slack, tmp_path):
    with FakeOpenAIServer() as models:
        models.script.chat_reply = "Lunch is reimbursed up to 30 EUR per day [1]."
        bot = run_bot(long_title_index, slack, tmp_path, answer_base_url=models.base_url, answer_model="m",
                      gate_threshold=0.0)
        try:
            bot.event(mention(slack, "How much is lunch reimbursed on a trip?"))
            final = wait_for(lambda: finished(slack))[0]
            cited = bot.services.feedback.answer(
                next(b for b in final.args["blocks"] if b["type"] == "context_actions")["elements"][0]
                ["positive_button"]["value"].split(":", 1)[1]).citations[0]
        finally:
            bot.stop()
    assert len(cited.location.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")) > SECTION_TEXT_LIMIT
    footnote = next(b for b in final.args["blocks"] if b.get("accessory", {}).get("action_id") == "show_source")
    text = footnote["text"]["text"]
    assert text.startswith("*[1]* Travel &amp; &lt;Expenses&gt;") and text.endswith("…") and len(text) <= 3000
    assert "30 EUR" in block_texts(final.args["blocks"])
    assert slack.stream_state(CHANNEL, stream_ts(slack)) == "stopped"


# --------------------------------------------------------------------- item 10: rate limits lend the answer slot


def test_an_answer_waiting_out_a_rate_limit_lends_its_slot_and_waits_at_most_ten_seconds(handbook_index, slack,
                                                                                          tmp_path):
    slack.fail_next("chat.appendStream", status=429, retry_after=30)
    bot = run_bot(handbook_index, slack, tmp_path, chat_settings={"AIE_MAX_CONCURRENT_ANSWERS": 1})
    try:
        first = mention(slack, "出差吃饭能报多少?")
        bot.event(first)
        limited = wait_for(lambda: [c for c in slack.calls_to("chat.appendStream") if c.status == 429])[0]
        second = mention(slack, "How long must a password be?")
        bot.event(second)
        wait_for(lambda: len(finished(slack)) == 2, timeout=60)
    finally:
        bot.stop()
    streams = {c.args["thread_ts"]: c.response["ts"] for c in slack.calls_to("chat.startStream")}
    done = {c.args["ts"]: c.time for c in finished(slack)}
    retried = next(c for c in slack.calls_to("chat.appendStream")
                   if c.time > limited.time and c.args["ts"] == streams[first["ts"]])
    assert done[streams[second["ts"]]] < retried.time, "the second question was answered during the wait"
    assert 9.5 <= retried.time - limited.time <= 12, "Retry-After is honoured up to 10 seconds"



def test_an_answer_being_delivered_holds_no_slot(handbook_index, slack, tmp_path):
    """Once an answer is made, posting it (here a final update Slack takes four seconds to accept) only waits:
    the other question, asked at the same time, is answered meanwhile, with one slot for both."""
    slack.slow("chat.update", 4)
    bot = run_bot(handbook_index, slack, tmp_path, chat_settings={"AIE_MAX_CONCURRENT_ANSWERS": 1})
    try:
        asked = [mention(slack, "出差吃饭能报多少?"), mention(slack, "How long must a password be?")]
        for event in asked:
            bot.event(event)
        wait_for(lambda: len(finished(slack)) == 2, timeout=60)
    finally:
        bot.stop()
    streams = {c.response["ts"]: c.args["thread_ts"] for c in slack.calls_to("chat.startStream")}
    first = finished(slack)[0]  # the first final update to arrive (both take four seconds)
    other = next(c for c in slack.calls_to("chat.startStream") if c.args["thread_ts"] != streams[first.args["ts"]])
    assert other.time < first.time + 3, "the other answer began while the first was being posted"
    assert {streams[c.args["ts"]] for c in finished(slack)} == {e["ts"] for e in asked}


# ------------------------------------------------------------------------ item 13: whose thread, asked once


def test_thread_chatter_asks_slack_once_per_thread_and_a_thread_the_bot_answers_is_its_own_at_once(
        handbook_index, slack, tmp_path):
    bot = run_bot(handbook_index, slack, tmp_path)
    try:
        root = slack.seed_message(CHANNEL, "lunch plans?", user="U0PLAIN01")

        def chatter(text: str) -> None:
            ts = slack.seed_message(CHANNEL, text, user="U0PLAIN01", thread_ts=root)
            bot.event({"type": "message", "channel_type": "channel", "channel": CHANNEL, "user": "U0PLAIN01",
                       "text": text, "ts": ts, "thread_ts": root, "team": TEAM})

        for n in range(5):
            chatter(f"pizza again, round {n}?")
        wait_for(lambda: slack.calls_to("conversations.replies"))
        time.sleep(2)
        assert len(slack.calls_to("conversations.replies")) == 1, "one look-up for five replies in the thread"
        assert not slack.calls_to("chat.startStream")
        bot.event(mention(slack, "How long must a password be?", thread_ts=root))
        wait_for(lambda: finished(slack))
        chatter("and where do I store it?")
        wait_for(lambda: len(slack.calls_to("chat.startStream")) == 2, timeout=30)  # answered, without a mention
        histories = [c for c in slack.calls_to("conversations.replies") if c.args["limit"] == 100]
        assert len(slack.calls_to("conversations.replies")) - len(histories) == 1, "whose thread: asked once"
    finally:
        bot.stop()


# ------------------------------------------------------------------------ item 16a: an empty assistant message


def test_an_empty_message_in_the_assistant_pane_gets_the_friendly_prompt(handbook_index, slack, tmp_path, caplog):
    bot = run_bot(handbook_index, slack, tmp_path)
    thread_ts = "1700000000.000100"
    try:
        with caplog.at_level(logging.INFO):
            ts = slack.seed_message("D0ASSIST1", "", user="U0PLAIN01", thread_ts=thread_ts)
            bot.event({"type": "message", "channel_type": "im", "channel": "D0ASSIST1", "user": "U0PLAIN01",
                       "text": "", "ts": ts, "thread_ts": thread_ts, "team": TEAM,
                       "assistant_thread": {"action_token": "x"}})
            reply = wait_for(lambda: slack.calls_to("chat.postMessage"))[0]
            time.sleep(1)
    finally:
        bot.stop()
    assert reply.args["text"] == "Ask me a question about the company's documents :wave:"
    assert reply.args["thread_ts"] == thread_ts
    assert not [c for c in slack.calls if "went wrong" in json.dumps(c.args)]
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info]


# ------------------------------------------------------------------ item 5: file names cannot ping, link or overflow

EVIL = "a` <!channel> <mailto:x|Open> `.md"


def test_a_reindex_report_names_files_inertly_and_fits_slack_in_the_channel_and_the_home_tab(slack, tmp_path,
                                                                                             shared_data_dir):
    docs = one_page_index(tmp_path, shared_data_dir)
    (docs / EVIL).write_text("# Evil\n\nNothing to see here, just a name.\n", encoding="utf-8")
    folder = docs / f"archive-{'y' * 150}"
    folder.mkdir()
    long_names = [f"{folder.name}/policy-{'x' * 150}-{n:02d}.md" for n in range(31)]  # 321 characters each
    for n, name in enumerate(long_names):
        (docs / name).write_text(f"# Policy {n}\n\nRule number {n} applies on day {n}.\n", encoding="utf-8")
    bot = start_bot(shared_data_dir, tmp_path / "index", slack.base_url)
    try:
        bot.command("/reindex", "U0ADMIN01")
        report = wait_for(lambda: [c for c in slack.calls_to("chat.update")
                                   if "Reindex finished" in c.args.get("text", "")], timeout=180)[0].args["text"]
        open_home(bot, slack, "U0ADMIN01")
        home = "\n".join(b["text"]["text"] for b in published(slack, "U0ADMIN01")["blocks"]
                          if b["type"] == "section")  # as sent: Slack's escapes kept
    finally:
        bot.stop()
    assert "Added 32" in report and len(report) <= 4000
    shown = [n for n in long_names if f"{n[-30:]}`" in report]  # long names are cut in the middle
    assert shown and f"{31 - len(shown)} more" in report, "the first names are listed, the rest counted"
    for text in (report, home):
        assert "<!channel>" not in text and "<mailto:" not in text, "no @channel ping, no link"
        assert "`aˋ &lt;!channel&gt; &lt;mailto:x|Open&gt; ˋ.md`" in text, "the name, whole, inside its code span"
    assert "Last reindex" in home


# ------------------------------------------------------------------------ thanks under an answer


def test_thanks_under_an_answer_gets_a_courteous_reply_not_a_search(handbook_index, slack, tmp_path):
    """In the bot's thread every reply is taken as a follow-up: "thanks!" was searched for and answered
    "Sorry, I could not find the answer to this in the knowledge base."."""
    from bot.core.answering import COURTESY_REPLIES

    bot = run_bot(handbook_index, slack, tmp_path)
    try:
        question = mention(slack, "How long must a password be?")
        bot.event(question)
        wait_for(lambda: finished(slack))

        def reply(text: str) -> None:
            ts = slack.seed_message(CHANNEL, text, user="U0PLAIN01", thread_ts=question["ts"])
            bot.event({"type": "message", "channel_type": "channel", "channel": CHANNEL, "user": "U0PLAIN01",
                       "text": text, "ts": ts, "thread_ts": question["ts"], "team": TEAM})

        def posted(text: str) -> list:
            return [c for c in slack.calls_to("chat.postMessage") if c.args.get("text") == text]

        reply("great, thanks! 🙏")
        [first] = wait_for(lambda: posted("You're welcome! Ask me anything else about our documents."))
        reply("好的，谢谢")
        [second] = wait_for(lambda: posted(COURTESY_REPLIES["thanks"]["zh"]))
        time.sleep(1)
    finally:
        bot.stop()
    assert first.args["thread_ts"] == second.args["thread_ts"] == question["ts"]
    assert len(slack.calls_to("chat.startStream")) == 1, "only the question was searched and answered"
    assert not [c for c in slack.calls if "could not find" in json.dumps(c.args)]
