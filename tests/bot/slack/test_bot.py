"""The Slack bot served over real HTTP, signed like Slack signs, against the local Slack Web API server
(which checks every call against Slack's method reference), answering from the real sample handbook."""

from __future__ import annotations

import json
import re
import shutil
import time
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from tests.bot.harness import BOT_USER, TEAM, sign, start_bot, wait_for
from tests.bot.replicas import Replica, replica_env
from tests.fakes.slack_api import SlackApiServer

CHANNEL = "C0GENERAL"


def mention(slack: SlackApiServer, text: str, user: str = "U0PLAIN01", thread_ts: str | None = None) -> dict:
    ts = slack.seed_message(CHANNEL, f"<@{BOT_USER}> {text}", user=user, thread_ts=thread_ts)
    event = {"type": "app_mention", "user": user, "text": f"<@{BOT_USER}> {text}", "ts": ts, "channel": CHANNEL,
             "event_ts": ts, "team": TEAM}
    if thread_ts:
        event["thread_ts"] = thread_ts
    return event


def block_texts(blocks: list) -> str:
    """Every text of the sections and markdown blocks of a message, as sent."""
    return " ".join(b["text"] if b["type"] == "markdown" else b["text"]["text"] for b in blocks
                    if b["type"] in ("markdown", "section"))


def answer_text(blocks: list) -> str:
    """The answer as the user reads it: its markdown blocks, with Slack's three escapes undone."""
    text = "".join(b["text"] for b in blocks if b["type"] == "markdown")
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


def final_answers(slack: SlackApiServer) -> list:
    """chat.update calls that put the finished answer (blocks with feedback buttons) in place."""
    return [c for c in slack.calls_to("chat.update")
            if any(b.get("type") == "context_actions" for b in c.args.get("blocks") or [])]


def test_a_mention_streams_into_the_thread_and_ends_with_footnotes_and_feedback(bot, slack):
    event = mention(slack, "出差吃饭能报多少?")
    began = time.perf_counter()
    response = bot.event(event)
    ack = time.perf_counter() - began
    assert response.status_code == 200 and ack < 3
    final = wait_for(lambda: final_answers(slack))[0]
    start = slack.calls_to("chat.startStream")[0]
    assert start.args["thread_ts"] == event["ts"] and start.args["recipient_user_id"] == "U0PLAIN01"
    assert slack.calls_to("chat.appendStream") and slack.calls_to("chat.stopStream")
    blocks = final.args["blocks"]
    text = block_texts(blocks)
    assert "一百元" in text and "[1]" in text
    footnotes = [b for b in blocks if b["type"] == "section" and b.get("accessory", {}).get("action_id") == "show_source"]
    assert footnotes and "第四章 伙食补助" in " ".join(f["text"]["text"] for f in footnotes)
    feedback = next(b for b in blocks if b["type"] == "context_actions")["elements"][0]
    assert feedback["type"] == "feedback_buttons" and feedback["positive_button"]["value"].startswith("up:")
    assert final.args["ts"] == start.response["ts"], "the streamed message is the one finished"


def test_signatures_are_verified(bot):
    body = json.dumps({"type": "url_verification", "challenge": "abc", "token": "x"}).encode()
    assert bot.post(body, "application/json").status_code == 200
    assert bot.post(body, "application/json", signed=False).status_code == 401
    forged = {**sign(body), "X-Slack-Signature": "v0=" + "0" * 64}
    assert bot.post(body, "application/json", headers=forged, signed=False).status_code == 401
    stale = sign(body, timestamp=int(time.time()) - 6 * 60)
    assert bot.post(body, "application/json", headers=stale, signed=False).status_code == 401
    wrong_secret = sign(body, secret="not-the-secret")
    assert bot.post(body, "application/json", headers=wrong_secret, signed=False).status_code == 401


@pytest.mark.parametrize("body, content_type", [
    (b"{", "application/json"), (b"[1]", "application/json"), (b"\xff\xfe", "application/json"),
    (b"payload=notjson", "application/x-www-form-urlencoded"),
    (b"ssl_check=1&token=x", "application/x-www-form-urlencoded"),
])
def test_what_slack_did_not_sign_is_refused_before_it_is_read(bot, body, content_type, caplog):
    """A body no parser takes gave a 500 and a stack trace in the log for anyone who posted it, and an
    unsigned SSL check a 200: Slack signs everything it sends."""
    response = bot.post(body, content_type, signed=False)
    assert (response.status_code, response.text) == (401, "invalid request")
    odd = {"X-Slack-Request-Timestamp": "not-a-number", "X-Slack-Signature": "v0=" + "0" * 64}
    assert bot.post(body, content_type, headers=odd, signed=False).status_code == 401
    assert "Traceback" not in caplog.text and "Error handling request" not in caplog.text


def test_a_retried_event_and_the_twin_message_event_give_one_answer(bot, slack):
    event = mention(slack, "How long must a password be?")
    assert bot.event(event, event_id="EvDUPLICATE1").status_code == 200
    assert bot.event(event, event_id="EvDUPLICATE1", headers={"X-Slack-Retry-Num": "1",
                                                              "X-Slack-Retry-Reason": "http_timeout"}).status_code == 200
    twin = {**event, "type": "message", "channel_type": "channel"}
    assert bot.event(twin, event_id="EvTWIN000001").status_code == 200
    wait_for(lambda: final_answers(slack))
    time.sleep(2)
    assert len(slack.calls_to("chat.startStream")) == 1 and len(final_answers(slack)) == 1


def test_feedback_buttons_store_votes_and_acknowledge(bot, slack):
    bot.event(mention(slack, "How long must a password be?"))
    final = wait_for(lambda: final_answers(slack))[0]
    feedback = next(b for b in final.args["blocks"] if b["type"] == "context_actions")["elements"][0]
    answer_id = feedback["negative_button"]["value"].split(":", 1)[1]
    click = {"type": "block_actions", "user": {"id": "U0PLAIN01"}, "team": {"id": TEAM}, "trigger_id": "t1",
             "channel": {"id": CHANNEL}, "container": {"type": "message", "channel_id": CHANNEL},
             "message": {"ts": final.args["ts"], "thread_ts": final.args["ts"]},
             "actions": [{"action_id": "answer_feedback", "block_id": "b", "type": "feedback_buttons",
                          "value": f"down:{answer_id}", "action_ts": "1"}]}
    assert bot.interaction(click).status_code == 200
    asked = wait_for(lambda: slack.calls_to("views.open"))[0]  # 👎: recorded, then "what was wrong?" (optional)
    assert asked.args["trigger_id"] == "t1" and asked.args["view"]["private_metadata"] == answer_id
    assert [(v.answer_id, v.user, v.value) for v in bot.services.feedback.votes()] == [(answer_id, "U0PLAIN01", -1)]
    click["actions"][0]["value"] = f"up:{answer_id}"
    bot.interaction(click)
    thanks = wait_for(lambda: slack.calls_to("chat.postEphemeral"))[0]
    votes = bot.services.feedback.votes()
    assert [(v.answer_id, v.user, v.value) for v in votes] == [(answer_id, "U0PLAIN01", 1)]
    recorded = bot.services.feedback.answer(answer_id)
    assert recorded.question == "How long must a password be?" and recorded.channel == CHANNEL and recorded.index_version
    assert thanks.args["text"] == "Thanks — your vote is updated." and thanks.args["thread_ts"] == final.args["ts"]


def test_show_source_opens_the_passage_and_wrong_source_is_recorded(bot, slack):
    bot.event(mention(slack, "出差吃饭能报多少?"))
    final = wait_for(lambda: final_answers(slack))[0]
    button = next(b for b in final.args["blocks"] if b.get("accessory", {}).get("action_id") == "show_source")["accessory"]
    answer_id, marker = button["value"].split(":")
    click = {"type": "block_actions", "user": {"id": "U0PLAIN01"}, "team": {"id": TEAM}, "trigger_id": "12345.98765.abcd",
             "channel": {"id": CHANNEL}, "container": {"type": "message"}, "message": {"ts": final.args["ts"]},
             "actions": [{"action_id": "show_source", "block_id": "f", "type": "button", "value": button["value"],
                          "action_ts": "1"}]}
    bot.interaction(click)
    opened = wait_for(lambda: slack.calls_to("views.open"))[0]
    view = opened.response["view"]  # as Slack keeps it, with its id and hash
    assert view["type"] == "modal" and view["title"]["text"] == f"Source [{marker}]"
    wrong = next(b for b in view["blocks"] if b["type"] == "actions")["elements"][0]
    modal_click = {"type": "block_actions", "user": {"id": "U0PLAIN01"}, "team": {"id": TEAM}, "trigger_id": "t2",
                   "container": {"type": "view", "view_id": view["id"]}, "view": view,
                   "actions": [{"action_id": "wrong_source", "block_id": "w", "type": "button", "value": wrong["value"],
                                "action_ts": "2"}]}
    bot.interaction(modal_click)
    updated = wait_for(lambda: slack.calls_to("views.update"))[0]
    assert updated.ok and updated.args["view_id"] == view["id"]
    vote = bot.services.feedback.votes()[0]
    assert vote.target == f"citation:{marker}" and vote.value == -1 and vote.chunk_id


def responses(slack: SlackApiServer, key: str) -> list[str]:
    """What the bot told the user through a slash command's response URL."""
    return [c.args["text"] for c in slack.calls_to("response_url") if c.response_key == key and c.ok]


def test_reindex_is_for_admins_only(bot, slack):
    refused = bot.command("/reindex", "U0PLAIN01", response_url=slack.response_url("plain"))
    assert refused.status_code == 200 and "Checking" in refused.text
    assert "only knowledge-base admins" in wait_for(lambda: responses(slack, "plain"))[0]
    # a workspace owner, found through users.info
    accepted = bot.command("/reindex", "U0OWNER01", response_url=slack.response_url("owner"))
    assert accepted.status_code == 200 and "Reindexing" in wait_for(lambda: responses(slack, "owner"))[0]
    done = wait_for(lambda: [c for c in slack.calls_to("chat.update") + slack.calls_to("chat.postMessage")
                             if ":white_check_mark:" in c.args.get("text", "")])
    assert "up to date" in done[0].args["text"] or "Reindex finished" in done[0].args["text"]


def test_reindex_answers_within_slacks_3_seconds_even_when_users_info_is_slow(bot, slack):
    slack.slow("users.info", 4)  # e.g. rate limited
    began = time.perf_counter()
    acked = bot.command("/reindex", "U0PLAIN01", response_url=slack.response_url("slow"))
    assert acked.status_code == 200 and time.perf_counter() - began < 1.5 and "Checking" in acked.text
    refusal = wait_for(lambda: responses(slack, "slow"), timeout=15)
    assert refusal == ["Sorry, only knowledge-base admins can run `/reindex`. "
                       "Ask one of them if documents look out of date."]
    assert not slack.calls_to("chat.postMessage"), "no reindex was started"


def test_a_question_over_the_length_limit_is_told_so_in_its_language(bot, slack):
    english = "How long must a password be, and where should I keep it? " * 44  # ~2,500 characters
    chinese = "出差吃饭能报多少，住宿标准又是多少？" * 140
    for question, expected in ((english, "That question is too long (2507 characters; the limit is 2000)"),
                               (chinese, "问题太长了（2520 个字符，上限 2000）")):
        event = mention(slack, question.strip())
        assert bot.event(event).status_code == 200
        reply = wait_for(lambda: [c for c in slack.calls_to("chat.postMessage")
                                  if c.args.get("thread_ts") == event["ts"]])
        assert reply[0].args["text"].startswith(expected), reply[0].args["text"]
    assert not slack.calls_to("chat.startStream"), "nothing was searched or streamed"


def test_a_full_answer_cache_does_not_make_the_bot_answer_a_retry_twice(bot, slack):
    event = mention(slack, "How long must a password be?")
    bot.event(event, event_id="EvBUSYCACHE1")
    wait_for(lambda: final_answers(slack))
    cache = bot.services.answerer.pipeline.cache
    for n in range(25_000):  # more than the in-process answer cache holds (20,000)
        cache.set("candidates", f"filler-{n}", b"x", 3600)
    retry = {"X-Slack-Retry-Num": "1", "X-Slack-Retry-Reason": "http_timeout"}
    assert bot.event(event, event_id="EvBUSYCACHE1", headers=retry).status_code == 200
    time.sleep(2)
    assert len(slack.calls_to("chat.startStream")) == 1 and len(final_answers(slack)) == 1


@pytest.fixture
def served_bot(handbook_index, slack, tmp_path):
    """`ai-employee serve` as its own process on a copy of the handbook index: the ack path timed with
    nothing of this test process (its client threads, its heap, threads earlier tests left) in the way."""
    data_dir = tmp_path / "data"
    shutil.copytree(handbook_index[1], data_dir / "index")
    replica = Replica("bot", replica_env(data_dir, slack.base_url, None, gate_threshold="0.85"), tmp_path)
    yield replica
    replica.stop()


def test_fifty_concurrent_mentions_are_acked_fast_and_answered_once(served_bot, slack):
    events = [mention(slack, question) for question in
              ["How long must a password be?", "出差吃饭能报多少?", "When are the offices open?"] * 16 + ["Can I park?"] * 2]
    with ThreadPoolExecutor(max_workers=50) as pool:
        statuses = list(pool.map(lambda event: served_bot.event(event).status_code, events))
    assert statuses == [200] * 50
    # The ack path itself, timed by the bot on its event loop's clock (wall time across a machine this
    # burst saturates would time the machine): no ack waits for the de-duplication, listeners or answers.
    acks = ack_seconds(served_bot)
    assert acks["+Inf"] == 50, acks
    assert acks["0.1"] == 50, f"acks that waited for other work: {acks}"
    wait_for(lambda: len(final_answers(slack)) + len(failed_replies(slack)) >= 50, timeout=600, interval=0.5)
    time.sleep(1)
    answered = [c.args["thread_ts"] for c in slack.calls_to("chat.startStream")]
    assert sorted(answered) == sorted(e["ts"] for e in events), "every question answered exactly once"


def ack_seconds(bot) -> dict[str, float]:
    """The cumulative buckets of the bot's Slack ack histogram, as /metrics shows them: upper bound -> count."""
    text = httpx.get(f"{bot.url}/metrics", timeout=30).text
    buckets = re.findall(r'^aie_slack_ack_seconds_bucket\{le="([^"]+)"\} (\S+)$', text, re.MULTILINE)
    return {bound.removesuffix(".0") if bound != "+Inf" else bound: float(count) for bound, count in buckets}


def failed_replies(slack):
    return [c for c in slack.calls_to("chat.postMessage") if "Sorry" in c.args.get("text", "")]


def test_answers_beyond_the_concurrency_limit_wait_their_turn(handbook_index, slack, tmp_path):
    data_dir, index_dir = handbook_index
    bot = start_bot(data_dir, index_dir, slack.base_url, chat_settings={"AIE_MAX_CONCURRENT_ANSWERS": 1},
                    gate_threshold=0.85, feedback_db=tmp_path / "feedback.sqlite3")
    try:
        events = [mention(slack, q) for q in
                  ["How long must a password be?", "When are the offices open?", "How much can I spend on a hotel?"]]
        with ThreadPoolExecutor(max_workers=3) as pool:
            assert all(r.status_code == 200 for r in pool.map(bot.event, events))
        wait_for(lambda: len(slack.calls_to("chat.stopStream")) == 3)
    finally:
        bot.stop()
    started = {c.response["ts"]: c.time for c in slack.calls_to("chat.startStream")}
    intervals = sorted((started[c.args["ts"]], c.time) for c in slack.calls_to("chat.stopStream"))
    assert len(intervals) == 3
    assert all(later[0] >= earlier[1] for earlier, later in zip(intervals, intervals[1:])), \
        "with one slot, an answer starts streaming only after the previous one stopped"
