"""Every answer ends as a finished message — footnotes, buttons, nothing lost, shown as written — or, when
Slack refuses the final message, with a short note in the thread."""

from __future__ import annotations

import logging

import pytest

from tests.bot.harness import start_bot, wait_for
from tests.bot.slack.test_bot import CHANNEL, answer_text, final_answers, mention
from tests.fakes.openai_server import FakeOpenAIServer
from tests.fakes.slack_api import SlackApiServer

TABLE = "| Expense | Limit |\n|---|---|\n| Hotel <London> | 220 EUR & breakfast |\n| 出差伙食 | 每天一百元 |"
CODE = "```\nif nights > 3 && city != \"<any>\":\n    print(\"<script>alert('x')</script>\")\n```"
PARAGRAPH = ("Passwords need at least 14 characters [1]. The rule a < b & c > d holds, and <script> stays text. "
             "密码至少需要十四个字符，并保存在公司的密码管理器中。")


@pytest.fixture
def slack():
    with SlackApiServer(users={"U0ADMIN01": {}, "U0PLAIN01": {}}) as server:
        yield server
        server.assert_no_rejections()


def run_bot(handbook_index, slack, tmp_path, models, **settings):  # noqa: F811
    data_dir, index_dir = handbook_index
    return start_bot(data_dir, index_dir, slack.base_url, gate_threshold=0.85, feedback_db=tmp_path / "feedback.sqlite3",
                     answer_base_url=models.base_url, answer_model="m", **settings)


def recorded_answer(bot, blocks: list):
    feedback = next(b for b in blocks if b["type"] == "context_actions")["elements"][0]
    return bot.services.feedback.answer(feedback["positive_button"]["value"].split(":", 1)[1])


def test_a_20000_character_markdown_answer_arrives_whole_and_as_written(handbook_index, slack, tmp_path):  # noqa: F811
    reply = "\n\n".join([TABLE, CODE] + [PARAGRAPH] * 165)
    assert len(reply) > 20_000
    with FakeOpenAIServer() as models:
        models.script.chat_reply, models.script.chat_pieces = reply, 200
        bot = run_bot(handbook_index, slack, tmp_path, models, answer_max_tokens=12_000)
        try:
            bot.event(mention(slack, "How long must a password be?"))

            def sent_pages() -> list:
                return [c.args["blocks"] for c in slack.calls_to("chat.update") + slack.calls_to("chat.postMessage")
                        if c.args.get("blocks")]

            wait_for(lambda: any(b["type"] == "context_actions" for page in sent_pages() for b in page), timeout=180)
            pages = sent_pages()
            recorded = recorded_answer(bot, pages[-1])
        finally:
            bot.stop()
    assert len(pages) >= 2, "more than one message's 12,000 markdown characters"
    for page in pages:
        assert len(page) <= 50 and sum(len(b["text"]) for b in page if b["type"] == "markdown") <= 12_000
    sent = "".join(b["text"] for page in pages for b in page if b["type"] == "markdown")
    assert "<script>" not in sent and "&lt;script&gt;" in sent, "Slack's control characters are escaped"
    assert "| Hotel &lt;London&gt; | 220 EUR &amp; breakfast |\n| 出差伙食 | 每天一百元 |" in sent, "the table is intact"
    assert "```\nif nights &gt; 3 &amp;&amp; city" in sent, "the code block is intact"
    shown = "".join(answer_text(page) for page in pages)
    assert "a < b & c > d" in recorded.answer and TABLE in recorded.answer and CODE in recorded.answer
    assert "".join(shown.split()) == "".join(recorded.answer.split()), "the user reads the answer as written"
    assert any(b.get("accessory", {}).get("action_id") == "show_source" for b in pages[-1]), "footnotes at the end"


def test_a_stream_expiring_on_slacks_side_still_ends_with_the_finished_answer(handbook_index, slack,  # noqa: F811
                                                                            tmp_path):
    reply = "Passwords must be at least 14 characters long [1]. They are stored in the password manager [1]. " * 3
    with FakeOpenAIServer() as models:
        models.script.chat_reply, models.script.chat_pieces, models.script.piece_delay = reply, 24, 0.1
        bot = run_bot(handbook_index, slack, tmp_path, models)
        try:
            bot.event(mention(slack, "How long must a password be?"))
            start = wait_for(lambda: slack.calls_to("chat.startStream"))[0]
            slack.expire_stream(CHANNEL, start.response["ts"])
            final = wait_for(lambda: final_answers(slack))[0]
            recorded = recorded_answer(bot, final.args["blocks"])
        finally:
            bot.stop()
        assert models.script.disconnects == 0, "the answer was generated to the end"
    refused = [c for c in slack.calls_to("chat.appendStream") if c.error == "message_not_in_streaming_state"]
    assert refused, "the stream expired while the answer was being streamed"
    assert final.args["ts"] == start.response["ts"], "the expired stream's message holds the finished answer"
    assert answer_text(final.args["blocks"]).count("14 characters") == 3
    assert any(b.get("accessory", {}).get("action_id") == "show_source" for b in final.args["blocks"])
    assert recorded is not None and recorded.answer.count("14 characters") == 3, "recorded for feedback"


def test_a_final_update_slack_refuses_is_explained_in_the_thread(handbook_index, slack, tmp_path, caplog):  # noqa: F811
    with FakeOpenAIServer() as models:
        models.script.chat_reply = "Passwords must be at least 14 characters long [1]."
        bot = run_bot(handbook_index, slack, tmp_path, models)
        slack.fail_next("chat.update", error="invalid_blocks")
        try:
            with caplog.at_level(logging.ERROR, logger="bot.core.answering"):
                event = mention(slack, "How long must a password be?")
                bot.event(event)
                note = wait_for(lambda: [c for c in slack.calls_to("chat.postMessage")
                                         if c.args.get("thread_ts") == event["ts"]])[0]
        finally:
            bot.stop()
    assert note.args["text"].startswith("Sorry, I could not put the finished answer in place")
    assert "invalid_blocks" not in note.args["text"] and "Traceback" not in note.args["text"]
    stream_ts = slack.calls_to("chat.startStream")[0].response["ts"]
    assert "14 characters" in slack.final_text(CHANNEL, stream_ts), "the streamed draft stays readable"
    assert any("invalid_blocks" in r.getMessage() for r in caplog.records), "the log names Slack's error"


def test_an_invented_sentence_is_marked_in_the_finished_message_and_cites_nothing(handbook_index, slack, tmp_path):  # noqa: F811
    with FakeOpenAIServer() as models:
        models.script.chat_reply = "Passwords must be at least 14 characters long [S1]. The CEO is Alice Smith [S1]."
        bot = run_bot(handbook_index, slack, tmp_path, models)
        try:
            bot.event(mention(slack, "How long must a password be?"))
            final = wait_for(lambda: final_answers(slack))[0]
        finally:
            bot.stop()
    blocks = final.args["blocks"]
    assert answer_text(blocks) == ("Passwords must be at least 14 characters long [1]. "
                                   "The CEO is Alice Smith (not found in the sources).")
    footnotes = [b for b in blocks if b.get("accessory", {}).get("action_id") == "show_source"]
    assert len(footnotes) == 1 and footnotes[0]["text"]["text"].startswith("*[1]*")
    notes = [e["text"] for b in blocks if b["type"] == "context" for e in b["elements"]]
    assert ":grey_question: 1 sentence is not backed by any source: it is marked “(not found in the sources)” " \
           "and cites nothing." in notes
