"""Teams over real HTTP, driven the way Teams drives it: activities POSTed to /api/messages whose serviceUrl
is a local Bot Connector that records (and checks) every reply, answering from the real sample handbook."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

from bot.teams.config import TeamsSettings
from tests.bot.harness import start_bot, wait_for
from tests.bot.teams_ui import ADMIN, activity, answer_of, feedback, post, start_teams_bot
from tests.fakes.openai_server import FakeOpenAIServer

CHAT = "a:personal-chat-1"


MEALS = "出差期间的伙食补助标准为每人每天一百元 [S1]。"


def test_a_personal_chat_streams_and_ends_with_native_citations_and_feedback(handbook_index, tmp_path, connector):
    with FakeOpenAIServer() as model:  # a model that takes a few seconds, so the answer streams in chunks
        model.script.chat_reply, model.script.chat_pieces, model.script.piece_delay = MEALS * 4, 40, 0.08
        teams = start_teams_bot(handbook_index, tmp_path, answer_base_url=model.base_url, answer_model="m")
        try:
            began = time.perf_counter()
            response = post(teams, activity(connector, "出差吃饭能报多少?", activity_id="msg-personal-1"))
            assert response.status_code == 202 and time.perf_counter() - began < 3
            final = wait_for(lambda: connector.final_messages(CHAT))[0]
            recorded = wait_for(lambda: answer_of(teams, CHAT, final.response["id"]))
        finally:
            teams.stop()
    calls = connector.calls_to(CHAT)
    assert all(c.activity_id == "msg-personal-1" for c in calls if c.method == "POST"), "replies to the question"
    informative, *chunks = [c for c in calls if c.type == "typing"]
    assert informative.stream_info["streamType"] == "informative"
    assert informative.text == "Searching the knowledge base…"
    assert chunks and all(c.stream_info["streamType"] == "streaming" for c in chunks)
    sequences = [c.stream_info["streamSequence"] for c in [informative, *chunks]]
    assert sequences == sorted(set(sequences)), "streamSequence increases"
    stream_id = informative.response["id"]
    assert {c.stream_info.get("streamId") for c in chunks} == {stream_id}
    assert final.stream_info == {"type": "streaminfo", "streamType": "final", "streamId": stream_id}
    assert final.text.count("一百元") == 4 and "[1]" in final.text and "[S1]" not in final.text
    first = min(final.citations, key=lambda c: c["position"])
    assert first["position"] == 1 and "第四章 伙食补助" in first["appearance"]["name"]
    assert recorded.question == "出差吃饭能报多少?" and recorded.platform == "teams" and recorded.channel == CHAT
    assert recorded.answer == final.text, "the answer recorded is the one shown"
    cited = recorded.citations[0]
    assert cited.text[:40] in first["appearance"]["text"], "the citation's card shows the cited passage"
    assert first["appearance"]["abstract"][:30] == " ".join(cited.text.split())[:30]
    message = final.entity("https://schema.org/Message")
    assert message["additionalType"] == ["AIGeneratedContent"], "marked as AI-generated"
    assert final.body["channelData"]["feedbackLoop"] == {"type": "custom"}, "feedback loop enabled: our own form"
    assert all(c.authorization is None for c in connector.calls), "anonymous mode: no token goes out"


def test_the_user_pressing_stop_in_teams_stops_the_answer_model(handbook_index, tmp_path, connector):
    """Teams refuses a stopped stream's later updates (403 ContentStreamNotAllowed): the model stops
    generating, and neither a final message nor an apology follows what was shown."""
    with FakeOpenAIServer() as model:
        model.script.chat_reply, model.script.chat_pieces, model.script.piece_delay = MEALS * 40, 200, 0.05
        teams = start_teams_bot(handbook_index, tmp_path, answer_base_url=model.base_url, answer_model="m")
        try:
            post(teams, activity(connector, "出差吃饭能报多少?"))
            wait_for(lambda: [c for c in connector.calls_to(CHAT) if (c.stream_info or {}).get("streamType")
                              == "streaming"])
            connector.stop_by_user(CHAT)
            wait_for(lambda: model.script.disconnects == 1, timeout=60)
            time.sleep(2)  # what a missed stop would send next: updates, the final message, an apology
        finally:
            teams.stop()
    assert len(model.script.sent) < 200, "the model stopped before the end of its answer"
    assert any(c.status == 403 for c in connector.calls), "Teams refused an update of the stopped stream"
    assert connector.messages_in(CHAT) == [], "no final message, no apology"
    connector.assert_no_rejections()


def test_a_channel_question_with_a_mention_gets_one_final_message_and_the_mention_is_stripped(teams, connector):
    thread = "19:general@thread.tacv2;messageid=1700000000001"
    post(teams, activity(connector, "How long must a password be?", conversation=thread, kind="channel",
                         mention=True))
    final = wait_for(lambda: connector.final_messages(thread))[0]
    time.sleep(1)
    assert [c.type for c in connector.messages_in(thread)] == ["message"], "one message, no streaming"
    assert not any(c.stream_info for c in connector.calls_to(thread)), "Teams allows no streaming in channels"
    assert connector.calls_to(thread)[0].type == "typing", "a typing indicator meanwhile"
    assert "14 characters" in final.text and final.citations
    recorded = wait_for(lambda: answer_of(teams, thread, final.response["id"]))
    assert recorded.question == "How long must a password be?", "the @mention is not part of the question"
    chatter = "19:general@thread.tacv2;messageid=1700000000009"
    post(teams, activity(connector, "lunch anyone?", conversation=chatter, kind="channel"))
    post(teams, activity(connector, "reindex", conversation=chatter, kind="groupChat"))
    time.sleep(1.5)
    assert connector.calls_to(chatter) == [], "channel chatter that does not mention the bot is not answered"


def test_feedback_from_teams_is_stored_with_its_comment_and_answered_with_an_invoke_response(teams, connector):
    post(teams, activity(connector, "How long must a password be?"))
    final = wait_for(lambda: connector.final_messages(CHAT))[0]
    recorded = wait_for(lambda: answer_of(teams, CHAT, final.response["id"]))
    response = post(teams, feedback(connector, final.response["id"], "dislike", "We use passphrases now."))
    assert response.status_code == 200, "Teams shows an error without an invoke response"
    [vote] = teams.services.feedback.votes()
    assert (vote.answer_id, vote.user, vote.value, vote.comment, vote.platform, vote.channel) == (
        recorded.answer_id, "aad0000b-0000-4000-8000-000000000002", -1, "We use passphrases now.", "teams", CHAT)
    assert post(teams, feedback(connector, final.response["id"], "like")).status_code == 200
    [vote] = teams.services.feedback.votes()
    assert (vote.value, vote.comment) == (1, None), "a changed vote drops the old comment"
    assert post(teams, feedback(connector, "unknown-message", "like")).status_code == 200
    assert len(teams.services.feedback.votes()) == 1


def test_follow_ups_use_the_earlier_turns_of_the_same_conversation_only(handbook_index, tmp_path, connector):
    with FakeOpenAIServer() as models:
        models.script.chat_fn = lambda body: "hotel reimbursement limit per night in London"
        teams = start_teams_bot(handbook_index, tmp_path, rewrite_base_url=models.base_url, rewrite_model="r")
        try:
            post(teams, activity(connector, "How much can I spend on a hotel?"))
            first = wait_for(lambda: connector.final_messages(CHAT))[0]
            assert "150 EUR" in first.text
            post(teams, activity(connector, "and in London?"))
            second = wait_for(lambda: connector.final_messages(CHAT)[1:])[0]
            rewrite = models.requests_to("/chat/completions")[-1]["body"]["messages"][-1]["content"]
            assert "Q: How much can I spend on a hotel?" in rewrite and "150 EUR" in rewrite
            assert "220 EUR" in second.text
            post(teams, activity(connector, "and in London?", conversation="a:personal-chat-2"))
            wait_for(lambda: connector.final_messages("a:personal-chat-2"))
            elsewhere = models.requests_to("/chat/completions")[-1]["body"]["messages"][-1]["content"]
            assert "hotel" not in elsewhere, "another conversation has no history of its own yet"
        finally:
            teams.stop()


def test_reindex_is_run_for_admins_with_progress_updated_in_place_and_refused_to_others(teams, connector):
    post(teams, activity(connector, "reindex", conversation="a:admin-chat", user=ADMIN))
    done = wait_for(lambda: [c for c in connector.calls_to("a:admin-chat") if "✅" in c.text], timeout=300)[0]
    progress = connector.messages_in("a:admin-chat")[0]
    assert progress.method == "POST" and "Reindexing" in progress.text
    assert done.method == "PUT" and done.activity_id == progress.response["id"], "one message, updated in place"
    assert "up to date" in done.text or "Reindex finished" in done.text
    assert teams.services.reindexer.last.by == ADMIN and teams.services.reindexer.last.platform == "teams"
    post(teams, activity(connector, "reindex", conversation="a:member-chat"))
    refused = wait_for(lambda: connector.messages_in("a:member-chat"))[0]
    assert refused.text.startswith("Sorry, only knowledge-base admins can run `reindex`")
    time.sleep(0.5)
    assert len(connector.messages_in("a:member-chat")) == 1 and teams.services.reindexer.last.by == ADMIN


def test_the_same_activity_delivered_twice_is_answered_once(teams, connector):
    question = activity(connector, "When are the offices open?", activity_id="msg-redelivered")
    assert post(teams, question).status_code == 202
    assert post(teams, question).status_code == 202
    wait_for(lambda: connector.final_messages(CHAT))
    time.sleep(2)
    assert len(connector.final_messages(CHAT)) == 1
    assert len([c for c in connector.calls_to(CHAT) if (c.stream_info or {}).get("streamType") == "informative"]) == 1


def test_expect_replies_returns_the_answer_in_the_response(teams, connector):
    response = post(teams, activity(connector, "How long must a password be?", deliveryMode="expectReplies"))
    assert response.status_code == 200
    [message] = [a for a in response.json()["activities"] if a["type"] == "message"]
    assert "14 characters" in message["text"] and "[1]" in message["text"]
    citations = next(e for e in message["entities"] if e["type"] == "https://schema.org/Message")["citation"]
    assert citations[0]["appearance"]["name"]
    assert connector.calls == [], "nothing goes through the connector"


def test_a_burst_of_twenty_questions_is_acked_fast_and_each_answered_once(teams, connector):
    chats = [f"a:burst-{n}" for n in range(20)]
    questions = ["How long must a password be?", "出差吃饭能报多少?", "When are the offices open?", "Can I park?"]
    with ThreadPoolExecutor(max_workers=20) as pool:
        def send(n: int) -> tuple[int, float]:
            began = time.perf_counter()
            status = post(teams, activity(connector, questions[n % 4], conversation=chats[n])).status_code
            return status, time.perf_counter() - began

        results = list(pool.map(send, range(20)))
    assert all(status == 202 for status, _ in results)
    assert max(seconds for _, seconds in results) < 3.0, sorted(s for _, s in results)[-3:]
    wait_for(lambda: all(connector.final_messages(chat) for chat in chats), timeout=300, interval=0.5)
    time.sleep(1)
    assert [len(connector.final_messages(chat)) for chat in chats] == [1] * 20, "every question answered exactly once"


def test_the_app_greets_when_it_is_added_to_a_chat(teams, connector):
    added = activity(connector, "", conversation="a:new-chat", type="conversationUpdate",
                     membersAdded=[{"id": "28:bot-app-id", "name": "AI Employee"}])
    added.pop("text")
    assert post(teams, added).status_code in (200, 202)
    [greeting] = wait_for(lambda: connector.messages_in("a:new-chat"))
    assert greeting.text.startswith("Hi! Ask me anything about our policies and documents")


def test_slack_and_teams_share_one_process_and_one_reindex_at_a_time(handbook_index, slack, connector, tmp_path):
    data_dir, index_dir = handbook_index
    teams = TeamsSettings(_env_file=None, anonymous_allowed=True, admin_ids=ADMIN)
    bot = start_bot(data_dir, index_dir, slack.base_url, teams=teams, gate_threshold=0.85,
                    feedback_db=tmp_path / "feedback.sqlite3")
    release, refresh = threading.Event(), bot.services.reindexer.refresh
    bot.services.reindexer.refresh = lambda progress: release.wait(60) and refresh(progress)  # held until released
    try:
        assert "Reindexing" in bot.command("/reindex", "U0ADMIN01").text
        wait_for(lambda: bot.services.reindexer.running)
        post(bot, activity(connector, "reindex", conversation="a:admin-chat", user=ADMIN))
        busy = wait_for(lambda: connector.messages_in("a:admin-chat"))[0]
        assert busy.text.startswith("A reindex is already running")
        post(bot, activity(connector, "How long must a password be?"))
        assert "14 characters" in wait_for(lambda: connector.final_messages(CHAT))[0].text, "answers continue"
    finally:
        release.set()
        wait_for(lambda: bot.services.reindexer.last is not None, timeout=300)
        bot.stop()
    assert bot.services.reindexer.last.by == "U0ADMIN01" and bot.services.reindexer.last.platform == "slack"


def test_an_invented_sentence_is_marked_in_chinese_and_has_no_citation(handbook_index, tmp_path, connector):
    with FakeOpenAIServer() as model:
        model.script.chat_reply = MEALS + "公司总经理是张伟[S1]。"
        teams = start_teams_bot(handbook_index, tmp_path, answer_base_url=model.base_url, answer_model="m")
        try:
            post(teams, activity(connector, "出差吃饭能报多少?", activity_id="msg-invented-1"))
            final = wait_for(lambda: connector.final_messages(CHAT))[0]
        finally:
            teams.stop()
    answer, note = final.text.split("\n\n", 1)
    assert answer == "出差期间的伙食补助标准为每人每天一百元 [1]。公司总经理是张伟（来源中未找到）。"
    assert note == "_❔ 有 1 句话在来源中找不到依据，已标注“（来源中未找到）”，不引用任何来源。_"
    assert [c["position"] for c in final.citations] == [1], "only the supported sentence cites a source"


def test_thanks_and_a_greeting_get_a_courteous_reply_not_a_search(teams, connector):
    """"谢谢！" after an answer asks nothing: searched for, it was answered "抱歉，知识库中没有找到这个问题的答案。"."""
    from bot.core.answering import COURTESY_REPLIES, GREETING

    post(teams, activity(connector, "谢谢！", conversation="a:thanks-chat", activity_id="msg-thanks-1"))
    post(teams, activity(connector, "Hi there!", conversation="a:hi-chat", activity_id="msg-hi-1"))
    [thanks] = wait_for(lambda: connector.messages_in("a:thanks-chat"))
    [hello] = wait_for(lambda: connector.messages_in("a:hi-chat"))
    time.sleep(1)
    assert thanks.text == COURTESY_REPLIES["thanks"]["zh"] == "不客气！还有其他问题随时问我。"
    assert hello.text == GREETING
    for chat in ("a:thanks-chat", "a:hi-chat"):
        assert [c.type for c in connector.calls_to(chat)] == ["message"], "no search: no typing, no stream"
