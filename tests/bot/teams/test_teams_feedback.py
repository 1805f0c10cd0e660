"""Per-source feedback and the admins' review in Teams, over real HTTP with the local Bot Connector: the
custom feedback form lists an answer's sources, two people's flags demote a passage (one person's never),
and an admin confirms, undoes and opens a flagged passage from the `review` card, which members cannot see."""

from __future__ import annotations

import json

from bot.core.review import Review, VotedPassage
from bot.teams.feedback import Submitted, parse
from bot.teams.review import review_card
from rag.feedback import CitedChunk
from tests.bot.harness import wait_for
from tests.bot.teams_ui import (
    ADMIN,
    MEMBER,
    activity,
    answer_of,
    card_action,
    card_actions,
    card_text,
    feedback_form,
    form_sent,
    post,
)
from tests.fakes.bot_connector import MESSAGE_BYTES

CHAT = "a:personal-chat-1"
OTHER = "aad0000c-0000-4000-8000-000000000003"
LEAVE = "How many days of annual leave do I get?"


def ask(teams, connector, question: str, conversation: str = CHAT, user: str = MEMBER):
    """The final message of the answer, and the answer as recorded."""
    before = len(connector.final_messages(conversation))
    post(teams, activity(connector, question, conversation=conversation, user=user))
    final = wait_for(lambda: connector.final_messages(conversation)[before:])[0]
    return final, wait_for(lambda: answer_of(teams, conversation, final.response["id"]))


def flag(teams, connector, final, marker: int, user: str, conversation: str = CHAT, choice: str = "wrong") -> str:
    """Send the feedback form with source `marker` judged; what the sender is told."""
    sent = post(teams, form_sent(connector, final.response["id"], "dislike", {f"source_{marker}": choice},
                                 conversation=conversation, user=user))
    assert sent.status_code == 200
    task = sent.json()["task"]
    assert task["type"] == "message"
    return task["value"]


def test_the_feedback_form_lists_the_answers_sources_to_judge(teams, connector):
    final, recorded = ask(teams, connector, LEAVE)
    assert final.body["channelData"]["feedbackLoop"] == {"type": "custom"}, "Teams asks us for the form"
    response = post(teams, feedback_form(connector, final.response["id"], "dislike"))
    assert response.status_code == 200
    task = response.json()["task"]
    assert task["type"] == "continue"
    card = task["value"]["card"]
    assert card["contentType"] == "application/vnd.microsoft.card.adaptive"
    text = card_text(card["content"])
    assert "what went wrong?" in text
    for marker, cited in enumerate(recorded.citations, 1):
        assert f"[{marker}] {cited.location}" in text
    inputs = {i["id"]: i for i in card["content"]["body"] if i["type"].startswith("Input.")}
    assert [c["title"] for c in inputs["source_1"]["choices"]] == ["Wrong source", "This helped"]
    assert inputs["feedbackText"]["isMultiline"]
    assert card_actions(card["content"]) == [("Send", None, None)]
    unknown = post(teams, feedback_form(connector, "no-such-message", "like"))
    assert unknown.json()["task"] == {"type": "message", "value": "Sorry, that answer is no longer on record."}


def test_two_teams_users_flagging_a_source_demote_it_one_user_twice_does_not(teams, connector):
    final, recorded = ask(teams, connector, LEAVE)
    flagged = recorded.citations[0].chunk_id
    for _ in range(2):  # one person, twice
        said = flag(teams, connector, final, 1, MEMBER)
        assert "[1] Marked as a wrong source — thanks. It will rank lower for similar questions once another " \
               "person agrees, or an admin confirms." in said
    _, again = ask(teams, connector, LEAVE)
    assert again.citations[0].chunk_id == flagged, "one person's flags do not move the passage"
    rows = {(v.user, v.target, v.value, v.chunk_id, v.admin, v.platform) for v in teams.services.feedback.votes()}
    assert (MEMBER, "citation:1", -1, flagged, False, "teams") in rows
    assert (MEMBER, "answer", -1, None, False, "teams") in rows, "the form's 👎 is the vote on the whole answer"

    said = flag(teams, connector, final, 1, OTHER)
    assert "It now ranks lower for similar questions (others flagged it too)." in said
    [demoted] = teams.services.adjuster.adjustments()
    assert demoted.status == "demoted" and sorted(demoted.flaggers) == sorted([MEMBER, OTHER])
    _, after = ask(teams, connector, LEAVE)
    assert after.citations and after.citations[0].chunk_id != flagged, "the flagged passage no longer comes first"
    helped = flag(teams, connector, final, 2, OTHER, choice="helped")
    assert "[2] Thanks — marked as helpful." in helped


def test_an_admins_single_flag_from_teams_counts_at_once(teams, connector):
    final, recorded = ask(teams, connector, LEAVE)
    said = flag(teams, connector, final, 1, ADMIN)
    assert "[1] Marked as a wrong source — thanks. It now ranks lower for similar questions (an admin's flag " \
           "counts at once)." in said
    [vote] = [v for v in teams.services.feedback.votes() if v.target == "citation:1"]
    assert (vote.user, vote.value, vote.admin, vote.chunk_id) == (ADMIN, -1, True, recorded.citations[0].chunk_id)


def review(teams, connector, user: str = ADMIN, conversation: str = "a:admin-chat"):
    before = len(connector.messages_in(conversation))
    post(teams, activity(connector, "review", conversation=conversation, user=user,
                         kind="personal" if conversation.startswith("a:") else "channel",
                         mention=not conversation.startswith("a:")))
    return wait_for(lambda: connector.messages_in(conversation)[before:])[0]


def test_an_admin_confirms_undoes_and_opens_a_flagged_passage_from_the_review_card(teams, connector):
    final, recorded = ask(teams, connector, LEAVE)
    cited = recorded.citations[0]
    assert "once another person agrees" in flag(teams, connector, final, 1, MEMBER)

    message = review(teams, connector)
    [attachment] = message.body["attachments"]
    card = attachment["content"]
    assert attachment["contentType"] == "application/vnd.microsoft.card.adaptive"
    text = card_text(card)
    assert f"**{cited.location}** · `{cited.file}`" in text and f"Flagged by `{MEMBER}`" in text
    assert "Status: **pending** — not demoted yet" in text
    assert "“How many days of annual leave do I get?”" in text and "👎 1 · 👍 0" in text
    chunk = {"chunk": cited.chunk_id}
    assert card_actions(card) == [("Confirm demotion", "review/confirm", chunk), ("Undo", "review/undo", chunk),
                                  ("Show passage", "review/show", chunk)]

    confirmed = post(teams, card_action(connector, "review/confirm", chunk)).json()
    assert confirmed["type"] == "application/vnd.microsoft.card.adaptive", "the card is replaced in place"
    text = card_text(confirmed["value"])
    assert f"Demotion confirmed for **{cited.location}**: it now ranks lower" in text
    assert "Status: **demoted** (admin)" in text
    assert [t for t, _, _ in card_actions(confirmed["value"])] == ["Undo", "Show passage"]
    [verdict] = teams.services.feedback.verdicts()
    assert (verdict.chunk_id, verdict.action, verdict.user) == (cited.chunk_id, "confirm", ADMIN)

    shown = card_text(post(teams, card_action(connector, "review/show", chunk)).json()["value"])
    assert " ".join(cited.text.split())[:60] in " ".join(shown.split())
    assert "**Voted on for these questions:**\n- How many days of annual leave do I get?" in shown

    undone = card_text(post(teams, card_action(connector, "review/undo", chunk)).json()["value"])
    assert f"Undone for **{cited.location}**: the votes on it so far no longer count" in undone
    assert "No flagged passages in this period." in undone
    assert [a.chunk_id for a in teams.services.adjuster.adjustments()] == []
    assert [o.action for o in teams.services.feedback.verdicts()] == ["confirm", "undo"]


def test_a_members_review_is_refused_and_so_are_their_card_actions(teams, connector):
    final, recorded = ask(teams, connector, LEAVE)
    flag(teams, connector, final, 1, MEMBER)
    refused = review(teams, connector, user=MEMBER, conversation="a:member-chat")
    assert refused.text == "Sorry, only knowledge-base admins can use `review`." and not refused.body.get("attachments")
    forged = post(teams, card_action(connector, "review/confirm", {"chunk": recorded.citations[0].chunk_id},
                                     conversation="a:member-chat", user=MEMBER)).json()
    assert card_text(forged["value"]) == "Sorry, only knowledge-base admins can use `review`."
    assert teams.services.feedback.verdicts() == []
    in_channel = review(teams, connector, conversation="19:general@thread.tacv2;messageid=5")
    assert in_channel.text.startswith("The review is only shown in our personal chat")


def big_review(n: int = 60) -> Review:
    answers = [{"answer_id": f"a{i}", "question": "Why? " * 200, "answer": "Because. " * 400, "down_votes": 3,
                "up_votes": 0, "reasons": {"outdated": 2, "other": 1}, "comments": ["x" * 3000] * 5,
                "channel": "a:chat", "platform": "teams", "last_vote": 1.7e9} for i in range(n)]
    passages = [{"chunk_id": f"c{i:040d}", "file": "f.md", "location": "Policy › Section " * 30, "text": "t " * 2000,
                 "flaggers": [f"aad{j:05d}-0000-4000-8000-000000000000" for j in range(40)],
                 "helpers": [f"aad{j:05d}-0000-4000-8000-00000000ffff" for j in range(40)],
                 "admin": False, "strength": 2.0, "last_vote": 1.7e9, "questions": ["q"], "status": "pending"}
                for i in range(n)]
    documents = [{"file": f"f{i}.md", "flags": 2} for i in range(n)]
    return Review({"answers": answers, "passages": passages, "documents": documents},
                  {"answers": 7, "passages": 8, "documents": 9})


def test_a_long_review_fits_one_teams_message_and_says_how_many_were_left_out():
    last = "c" + f"{14:040d}"
    opened = VotedPassage(CitedChunk(last, "f.md", "Policy", "word " * 5000), ["q"] * 20)
    for shown in (None, (last, opened)):
        card = review_card(big_review(), notice="n" * 300, shown=shown)
        message = {"type": "message", "attachments": [{"contentType": "application/vnd.microsoft.card.adaptive",
                                                       "content": card}]}
        assert len(json.dumps(message, ensure_ascii=False).encode("utf-16-le")) < MESSAGE_BYTES - 2000
        text = card_text(card)
        assert "more down-voted answers (`ai-employee feedback summary --limit N` lists more)" in text
        assert "more flagged passages (`ai-employee feedback summary --limit N` lists more)" in text
        assert "7 more down-voted answers outside your scope" in text and "and 30 more" in text, "flaggers beyond ten"
    assert "word word" in text and [d for _, _, d in card_actions(card)][-1] == {"chunk": last}, \
        "the passage opened is shown even when it comes late in the list"


def test_a_form_s_unknown_choices_and_inputs_are_ignored_and_a_plain_string_is_the_comment():
    form = {"source_1": "wrong", "source_2": "helped", "source_3": "maybe", "sourcex": "wrong", "feedbackText": "Old"}
    value = {"actionName": "feedback", "actionValue": {"reaction": "dislike", "feedback": json.dumps(form)}}
    assert parse(value) == Submitted(False, "Old", {1: -1, 2: 1})
    plain = {"actionName": "feedback", "actionValue": {"reaction": "like", "feedback": "not JSON"}}
    assert parse(plain) == Submitted(True, "not JSON", {})
    assert parse({"actionName": "feedback", "actionValue": {"reaction": "meh"}}) is None
    assert parse({"actionName": "other"}) is None and parse("feedback") is None
