"""Feedback through Slack, over HTTP against the local Slack API: why an answer was not helpful, votes on
cited passages, and what those votes do to the next answer."""

from __future__ import annotations

import pytest

from bot.core.not_kept import NOT_KEPT
from rag.storage import DiskFull
from tests.bot.harness import start_bot, wait_for
from tests.bot.slack.test_bot import block_texts
from tests.bot.slack_ui import ask, open_source, submit, thumbs, view_text, vote_on_source
from tests.conftest import ENTITLEMENT, ENTITLEMENT_ZH, LEAVE
from tests.fakes.openai_server import FakeOpenAIServer, quoting
from tests.fakes.slack_api import view_problems

REASON_LABELS = ["Wrong source", "Outdated", "Incomplete", "Other"]


def reason_values(reason: str | None, comment: str | None) -> dict:
    selected = None if reason is None else {"text": {"type": "plain_text", "text": reason.title()}, "value": reason}
    return {"reason": {"reason": {"type": "radio_buttons", "selected_option": selected}},
            "comment": {"comment": {"type": "plain_text_input", "value": comment}}}


def test_a_down_vote_asks_why_and_keeps_the_reason_and_comment(bot, slack):
    message, answer_id = ask(bot, slack, "How long must a password be?")
    thumbs(bot, message, answer_id, "U0PLAIN01", up=False, trigger_id="trigger-down-1")
    opened = wait_for(lambda: slack.calls_to("views.open"))[0]
    assert opened.args["trigger_id"] == "trigger-down-1"
    modal = opened.response["view"]
    inputs = {b["block_id"]: b for b in modal["blocks"] if b["type"] == "input"}
    assert [o["text"]["text"] for o in inputs["reason"]["element"]["options"]] == REASON_LABELS
    assert inputs["comment"]["optional"] and inputs["comment"]["element"]["multiline"]
    assert "Your :thumbsdown: is recorded" in view_text(modal) and modal["close"]["text"] == "Skip"
    assert not slack.calls_to("chat.postEphemeral"), "for a 👎 the modal is the acknowledgement"
    [vote] = bot.services.feedback.votes()
    assert (vote.user, vote.value, vote.reason) == ("U0PLAIN01", -1, None), "recorded before any reason"

    unanswered = submit(bot, modal, "U0PLAIN01", reason_values(None, "no reason picked"))
    assert unanswered.json()["response_action"] == "errors" and "reason" in unanswered.json()["errors"]
    assert bot.services.feedback.votes()[0].reason is None

    sent = submit(bot, modal, "U0PLAIN01", reason_values("outdated", "Since March the minimum is 16 characters."))
    assert sent.status_code == 200
    reply = sent.json()
    assert reply["response_action"] == "update" and not view_problems(reply["view"], ("modal",))
    assert "your reason is recorded" in view_text(reply["view"]) and "Outdated" in view_text(reply["view"])
    [vote] = bot.services.feedback.votes()
    assert (vote.value, vote.reason, vote.comment) == (-1, "outdated", "Since March the minimum is 16 characters.")

    # Someone else's 👎, and the modal closed without sending: the vote stays, without a reason.
    thumbs(bot, message, answer_id, "U0OWNER01", up=False, trigger_id="trigger-down-2")
    wait_for(lambda: len(slack.calls_to("views.open")) == 2)
    votes = {v.user: v for v in bot.services.feedback.votes()}
    assert (votes["U0OWNER01"].value, votes["U0OWNER01"].reason) == (-1, None)
    assert votes["U0PLAIN01"].reason == "outdated"
    # 👍 is still thanked with an ephemeral message, and asks nothing.
    thumbs(bot, message, answer_id, "U0PLAIN02", up=True, trigger_id="trigger-up")
    thanks = wait_for(lambda: slack.calls_to("chat.postEphemeral"))[0]
    assert thanks.args["user"] == "U0PLAIN02" and thanks.args["text"] == "Thanks — your feedback is recorded."
    assert len(slack.calls_to("views.open")) == 2


def test_source_votes_record_plus_or_minus_one_on_the_cited_passage(bot, slack):
    message, answer_id = ask(bot, slack, "出差吃饭能报多少?")
    modal = open_source(bot, slack, message, 1, "U0PLAIN01")
    labels = [e["text"]["text"] for b in modal["blocks"] if b["type"] == "actions" for e in b["elements"]]
    assert labels == ["This source is wrong", "This source helped"]

    helped = vote_on_source(bot, slack, message, 1, "U0PLAIN01", helped=True)
    assert "Thanks — marked as helpful." in helped
    wrong = vote_on_source(bot, slack, message, 1, "U0PLAIN02", helped=False)
    assert ("Marked as a wrong source — thanks. It will rank lower for similar questions once another person "
            "agrees, or an admin confirms.") in wrong
    chunk = bot.services.feedback.answer(answer_id).citations[0].chunk_id
    rows = {(v.user, v.target, v.value, v.chunk_id, v.admin) for v in bot.services.feedback.votes()}
    assert rows == {("U0PLAIN01", "citation:1", 1, chunk, False), ("U0PLAIN02", "citation:1", -1, chunk, False)}


def test_two_people_flagging_a_passage_demote_it_for_the_next_similar_question_one_person_twice_does_not(bot, slack):
    question = "How many days of annual leave do I get?"
    message, answer_id = ask(bot, slack, question)
    flagged = bot.services.feedback.answer(answer_id).citations[0].chunk_id

    for _ in range(2):  # one person, twice
        said = vote_on_source(bot, slack, message, 1, "U0PLAIN01", helped=False)
        assert "once another person agrees" in said
    _, same_id = ask(bot, slack, question)
    assert bot.services.feedback.answer(same_id).citations[0].chunk_id == flagged
    [pending] = bot.services.adjuster.adjustments()
    assert (pending.chunk_id, pending.status, pending.flaggers) == (flagged, "pending", ["U0PLAIN01"])

    said = vote_on_source(bot, slack, message, 1, "U0PLAIN02", helped=False)
    assert "It now ranks lower for similar questions (others flagged it too)." in said
    [demoted] = bot.services.adjuster.adjustments()
    assert demoted.status == "demoted" and sorted(demoted.flaggers) == ["U0PLAIN01", "U0PLAIN02"]
    _, next_id = ask(bot, slack, question)
    cited = [c.chunk_id for c in bot.services.feedback.answer(next_id).citations]
    assert cited and cited[0] != flagged, "asked again, the answer no longer cites the flagged passage first"


def test_an_admins_single_flag_demotes_and_a_members_does_not(bot, slack):
    message, answer_id = ask(bot, slack, "How do I report a lost laptop or a phishing email?")
    cited = bot.services.feedback.answer(answer_id).citations
    said = vote_on_source(bot, slack, message, 1, "U0PLAIN01", helped=False)
    assert "once another person agrees, or an admin confirms" in said
    # A workspace owner (users.info says so), not listed in AIE_ADMIN_USER_IDS.
    said = vote_on_source(bot, slack, message, 2, "U0OWNER01", helped=False)
    assert "It now ranks lower for similar questions (an admin's flag counts at once)." in said
    status = {a.chunk_id: (a.status, a.admin) for a in bot.services.adjuster.adjustments()}
    assert status == {cited[0].chunk_id: ("pending", False), cited[1].chunk_id: ("demoted", True)}
    admin_vote = next(v for v in bot.services.feedback.votes() if v.user == "U0OWNER01")
    assert admin_vote.admin and admin_vote.value == -1
    # The admin check is cached: a second vote by the owner does not ask users.info again.
    vote_on_source(bot, slack, message, 1, "U0OWNER01", helped=True)
    assert [c.args["user"] for c in slack.calls_to("users.info")].count("U0OWNER01") == 1


def flag_the_second_footnote(bot, slack, message: dict, answer_id: str):
    """Two people press "This source is wrong" on footnote [2] of `message`; the passage it cited."""
    flagged = bot.services.feedback.answer(answer_id).citations[1]
    for user in ("U0PLAIN01", "U0PLAIN02"):
        vote_on_source(bot, slack, message, 2, user, helped=False)
    [demoted] = bot.services.adjuster.adjustments()
    assert (demoted.chunk_id, demoted.status) == (flagged.chunk_id, "demoted")
    return flagged


def test_a_chinese_passage_two_people_flagged_is_not_quoted_again_for_the_english_question(bot, slack):
    """Footnote [2] quotes the Chinese leave rules under the English policy's 26 days. Flagged by two people,
    it was quoted again all the same, from the other language's best passages (joined by meaning alone)."""
    message, answer_id = ask(bot, slack, LEAVE)
    assert ENTITLEMENT_ZH in block_texts(message["blocks"])
    flagged = flag_the_second_footnote(bot, slack, message, answer_id)
    assert flagged.file == "年假与请假制度.md"

    again, _ = ask(bot, slack, LEAVE, user="U0OWNER01")
    shown = block_texts(again["blocks"])
    assert ENTITLEMENT in shown, "the English policy still answers"
    assert ENTITLEMENT_ZH not in shown and flagged.location not in shown


def test_a_passage_two_people_flagged_is_not_given_to_the_answer_model_again(handbook_index, slack, tmp_path):
    data_dir, index_dir = handbook_index
    with FakeOpenAIServer() as model:
        model.script.stream_fn = quoting(ENTITLEMENT, ENTITLEMENT_ZH)
        bot = start_bot(data_dir, index_dir, slack.base_url, gate_threshold=0.85,
                        feedback_db=tmp_path / "feedback.sqlite3", answer_base_url=model.base_url,
                        answer_model="m")
        try:
            message, answer_id = ask(bot, slack, LEAVE)
            flagged = flag_the_second_footnote(bot, slack, message, answer_id)
            again, _ = ask(bot, slack, LEAVE, user="U0OWNER01")
        finally:
            bot.stop()
        first, second = (str(r["body"]["messages"]) for r in model.requests_to("/chat/completions"))
    assert flagged.file == "年假与请假制度.md" and ENTITLEMENT_ZH in first
    assert ENTITLEMENT_ZH not in second, "the flagged passage is not among the sources the model reads"
    shown = block_texts(again["blocks"])
    assert ENTITLEMENT in shown and flagged.location not in shown


def test_a_vote_the_full_disk_cannot_keep_is_answered_with_why(bot, slack, monkeypatch: pytest.MonkeyPatch):
    """A 👍 pressed while the data dir's disk is full gets a short note in the channel, seen only by the one who
    pressed it, instead of silence (and a traceback in the log); once there is room, votes are thanked again."""
    message, answer_id = ask(bot, slack, "How long must a password be?")
    store = bot.services.feedback
    keep = store.vote

    def full(*args, **kwargs):
        raise DiskFull(store.path.parent)

    monkeypatch.setattr(store, "vote", full)
    thumbs(bot, message, answer_id, "U0PLAIN03", up=True, trigger_id="trigger-full")
    told = wait_for(lambda: slack.calls_to("chat.postEphemeral"))[0]
    assert (told.args["user"], told.args["text"]) == ("U0PLAIN03", NOT_KEPT)
    assert store.votes() == []

    monkeypatch.setattr(store, "vote", keep)
    thumbs(bot, message, answer_id, "U0PLAIN03", up=True, trigger_id="trigger-room")
    thanked = wait_for(lambda: slack.calls_to("chat.postEphemeral")[1:])[0]
    assert thanked.args["text"] == "Thanks — your feedback is recorded." and len(store.votes()) == 1
