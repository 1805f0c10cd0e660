"""Issue 17, item 6, as people see it: a poisoned document and an answer model that writes links to
elsewhere, answered over real HTTP in Slack (local Slack Web API) and Teams (local Bot Connector). Neither
the streamed text nor the finished message holds a live link except to the cited source's own URL."""

from __future__ import annotations

import json
import time

from bot.slack.blocks import markdown_pieces
from tests.bot.harness import BOT_USER, TEAM, start_bot, wait_for
from tests.bot.teams_ui import activity, post, start_teams_bot
from tests.fakes.openai_server import FakeOpenAIServer
from tests.rag.test_poisoned_documents import QUESTION, WIKI, live_links, poisoned_kb  # noqa: F401 - a fixture

REPLY = ("Claim the daily meal allowance within 30 days of the trip [S1][S2]. Use [the claims portal]"
         "(https://evil.example/login), <https://evil.example/claim|this form> or https://evil.example/claim [S1][S2]. "
         f"The meal allowance is 45 EUR per day, see the [travel wiki]({WIKI}) [S1][S2].")


def test_slack_shows_no_link_but_the_cited_sources_own_while_streaming_and_when_finished(poisoned_kb, slack, tmp_path):
    data_dir, index_dir = poisoned_kb
    with FakeOpenAIServer() as model:
        model.script.chat_reply, model.script.chat_pieces, model.script.piece_delay = REPLY, 30, 0.02
        bot = start_bot(data_dir, index_dir, slack.base_url, gate_threshold=0.85, feedback_db=tmp_path / "f.sqlite3",
                        answer_base_url=model.base_url, answer_model="m")
        try:
            ts = slack.seed_message("C0GENERAL", f"<@{BOT_USER}> {QUESTION}", user="U0PLAIN01")
            bot.event({"type": "app_mention", "user": "U0PLAIN01", "text": f"<@{BOT_USER}> {QUESTION}", "ts": ts,
                       "channel": "C0GENERAL", "event_ts": ts, "team": TEAM})
            final = wait_for(lambda: [c for c in slack.calls_to("chat.update")
                                      if any(b.get("type") == "context_actions" for b in c.args.get("blocks") or [])])[0]
            buttons = [b["accessory"] for b in final.args["blocks"]
                       if b.get("accessory", {}).get("action_id") == "show_source"]
            for n, button in enumerate(buttons):
                bot.interaction({"type": "block_actions", "user": {"id": "U0PLAIN01"}, "team": {"id": TEAM},
                                 "trigger_id": f"1.2.{n}", "channel": {"id": "C0GENERAL"},
                                 "container": {"type": "message"}, "message": {"ts": final.args["ts"]},
                                 "actions": [{"action_id": "show_source", "block_id": "f", "type": "button",
                                              "value": button["value"], "action_ts": str(n)}]})
            modals = wait_for(lambda: len(slack.calls_to("views.open")) == len(buttons) and slack.calls_to("views.open"))
        finally:
            bot.stop()
    streamed = "".join(chunk.get("text", "") for method in ("chat.startStream", "chat.appendStream", "chat.stopStream")
                       for c in slack.calls_to(method) for chunk in c.args.get("chunks") or [])
    assert "claims portal" in streamed and live_links(streamed) == [WIKI]
    shown = "".join(b["text"] for b in final.args["blocks"] if b["type"] == "markdown")
    assert "the claims portal (`evil.example`)" in shown and "`https://evil.example/claim`" in shown
    assert f"[travel wiki]({WIKI})" in shown and live_links(shown) == [WIKI]
    footnotes = " ".join(b["text"]["text"] for b in final.args["blocks"] if b["type"] == "section")
    assert f"<{WIKI}|Travel Policy>" in footnotes
    # a link in a heading is plain in the footnote: mrkdwn would link a bare URL even inside parentheses
    assert "reset your password (`evil.example`)" in footnotes and "https://evil.example" not in footnotes
    passages = [" ".join(b["text"]["text"] for b in m.args["view"]["blocks"] if b["type"] == "section") for m in modals]
    poisoned = next(p for p in passages if "click here" in p)  # mrkdwn: bare URLs link, `code` does not
    assert "click here (`evil.example`)" in poisoned and "`https://evil.example/claim`" in poisoned
    assert all(url.startswith(WIKI) for p in passages for url in live_links(p))


def test_teams_shows_no_link_but_the_cited_sources_own_while_streaming_and_when_finished(poisoned_kb, tmp_path,
                                                                                         connector):
    with FakeOpenAIServer() as model:
        model.script.chat_reply, model.script.chat_pieces, model.script.piece_delay = REPLY, 30, 0.05
        teams = start_teams_bot(poisoned_kb, tmp_path, answer_base_url=model.base_url, answer_model="m")
        try:
            post(teams, activity(connector, QUESTION, activity_id="msg-poison-1"))
            final = wait_for(lambda: connector.final_messages("a:personal-chat-1"))[0]
            time.sleep(0.2)
        finally:
            teams.stop()
    chunks = [c.text or "" for c in connector.calls_to("a:personal-chat-1") if c.type == "typing"]
    assert any("claims portal" in text for text in chunks), "the answer streamed"
    assert all(url == WIKI for text in chunks for url in live_links(text))
    assert "the claims portal (`evil.example`)" in final.text and live_links(final.text) == [WIKI]
    assert {c["appearance"].get("url") for c in final.citations} <= {WIKI, None}
    cards = [json.loads(c["appearance"]["text"]) for c in final.citations]  # Adaptive Cards render Markdown links
    shown = [block["text"] for card in cards for block in card["body"]]
    shown += [c["appearance"]["abstract"] for c in final.citations]
    assert any("click here (`evil.example`)" in text for text in shown)
    assert any("reset your password (`evil.example`)" in c["appearance"]["name"] for c in final.citations)
    assert all(url == WIKI for text in shown for url in live_links(text))


def test_slack_markdown_escapes_what_it_would_read_as_a_link_or_a_mention():
    text = "left over: <https://evil.example|click> <!channel> <@U0ADMIN01> & more"
    assert markdown_pieces(text) == ["left over: &lt;https://evil.example|click&gt; &lt;!channel&gt; "
                                     "&lt;@U0ADMIN01&gt; &amp; more"]
