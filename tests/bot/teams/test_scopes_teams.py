"""Knowledge scopes in Teams, over real HTTP with the local Bot Connector: a mapped channel answers from its
collections (whatever reply chain the question is in), access-listed documents reach their readers in a
personal chat only, and admins change a channel's scope with the `scope` command."""

from __future__ import annotations

import time

import pytest

from bot.teams.config import TeamsSettings
from tests.bot.harness import wait_for
from tests.bot.scoped import (  # noqa: F401 - the fixtures
    LEAVE_DAYS,
    SALARY,
    TEAMS_BOSS,
    changing_index,
    scoped_index,
    start_scoped_bot,
)
from tests.bot.teams_ui import ADMIN, MEMBER, activity, post

ENG_CHANNEL, HR_CHANNEL = "19:eng@thread.tacv2", "19:hr@thread.tacv2"
LEAVE = "How many days of annual leave do I get?"
PAY = "How much do senior engineers earn?"


@pytest.fixture
def teams(scoped_index, tmp_path):  # noqa: F811
    settings = TeamsSettings(_env_file=None, anonymous_allowed=True, admin_ids=ADMIN)
    running = start_scoped_bot(scoped_index, tmp_path, None, teams=settings)
    yield running
    running.stop()


def ask(teams, connector, conversation: str, text: str, user: str = MEMBER) -> str:
    """The finished answer as the reader sees it: its text and every citation's name and passage."""
    kind = "personal" if conversation.startswith("a:") else "channel"
    post(teams, activity(connector, text, conversation=conversation, kind=kind, user=user, mention=kind != "personal"))
    final = wait_for(lambda: connector.final_messages(conversation))[-1]
    return " ".join([final.text, *(c["appearance"]["name"] + " " + c["appearance"]["text"] for c in final.citations)])


def command(teams, connector, conversation: str, text: str, user: str) -> str:
    before = len(connector.messages_in(conversation))
    post(teams, activity(connector, text, conversation=conversation, kind="channel", user=user, mention=True))
    return wait_for(lambda: connector.messages_in(conversation)[before:])[0].text


def test_a_mapped_channel_answers_from_its_collections_in_every_reply_chain(teams, connector):
    assert LEAVE_DAYS in ask(teams, connector, f"{HR_CHANNEL};messageid=1", LEAVE)
    answer = ask(teams, connector, f"{ENG_CHANNEL};messageid=2", LEAVE)
    assert LEAVE_DAYS not in answer and "Leave policy" not in answer


def test_an_access_listed_document_reaches_its_reader_in_a_personal_chat_only(teams, connector):
    assert SALARY in ask(teams, connector, "a:boss-chat", PAY, user=TEAMS_BOSS)
    assert SALARY not in ask(teams, connector, "a:member-chat", PAY, user=MEMBER)
    assert SALARY not in ask(teams, connector, f"{HR_CHANNEL};messageid=3", PAY, user=TEAMS_BOSS)


def test_the_scope_command_is_for_admins_and_changes_the_next_answer(teams, connector):
    chain = f"{HR_CHANNEL};messageid=4"
    refused = command(teams, connector, chain, "scope eng", MEMBER)
    assert refused.startswith("Sorry, only knowledge-base admins can change the scope. `scope` alone shows it.")
    assert command(teams, connector, chain, "scope", MEMBER).startswith(
        "**Scope of this channel:** hr, public (from the scopes file).")
    listed = command(teams, connector, chain, "scope", ADMIN)  # posted in the channel: everyone reads it
    # Counted as the channel may be quoted them: not the access-listed salary bands (its readers' count alone
    # would change as restricted documents come and go)
    assert "**This channel's collections in the index** (documents): hr (1), public (1)" in listed
    assert "eng" not in listed and "Collections in the index" not in listed
    post(teams, activity(connector, "scope", conversation="a:admin-chat", user=ADMIN))
    alone = wait_for(lambda: connector.messages_in("a:admin-chat"))[0].text
    assert "**Collections in the index** (documents): eng (1), hr (2), public (1)" in alone
    changed = command(teams, connector, chain, "scope eng, public", ADMIN)
    assert changed.startswith("Scope of this channel is now **eng, public** (it was hr, public).")
    assert LEAVE_DAYS not in ask(teams, connector, f"{HR_CHANNEL};messageid=5", LEAVE), "the whole channel"
    audit = teams.services.scopes.overrides.audit("teams", HR_CHANNEL)
    assert [(a.user, a.old, a.new) for a in audit] == [(ADMIN, None, {"eng", "public"})]
    assert command(teams, connector, chain, "scope reset", ADMIN).startswith("Override dropped")
    assert LEAVE_DAYS in ask(teams, connector, f"{HR_CHANNEL};messageid=6", LEAVE)


def test_a_question_that_starts_with_scope_is_answered_not_taken_as_the_command(teams, connector):
    answer = ask(teams, connector, "a:admin-chat", "scope of the annual leave policy?", user=ADMIN)
    assert "Scope of this" not in answer and LEAVE_DAYS in answer
    time.sleep(0.5)
    assert teams.services.scopes.overrides.audit() == []


def test_a_reindex_report_in_a_channel_names_only_the_files_the_channel_may_read(changing_index, connector, tmp_path):
    settings = TeamsSettings(_env_file=None, anonymous_allowed=True, admin_ids=ADMIN)
    teams = start_scoped_bot(changing_index, tmp_path, None, teams=settings)
    try:
        chain = f"{HR_CHANNEL};messageid=7"
        post(teams, activity(connector, "reindex", conversation=chain, kind="channel", user=ADMIN, mention=True))
        report = wait_for(lambda: [c.text for c in connector.calls_to(chain) if "Reindex finished" in (c.text or "")],
                          timeout=300)[0]
        assert "Added 2 · changed 1 · removed 1" in report
        assert "**Added:** `hr/bonus.md` and 1 more outside this conversation's scope" in report
        assert "**Changed:** 1 outside" in report and "**Removed:** 1 outside" in report
        assert "eng/" not in report and "salaries" not in report
    finally:
        teams.stop()


def test_a_group_chat_without_its_conversation_type_is_not_taken_for_a_personal_chat(teams, connector):
    """Teams leaves `conversationType` out now and then: a `19:…` thread is still read by everyone in it."""
    for conversation, mention in (("19:group-chat@thread.v2", True), ("a:boss-chat-untyped", False)):
        body = activity(connector, PAY, conversation=conversation, user=TEAMS_BOSS, mention=mention)
        body["conversation"].pop("conversationType")
        post(teams, body)
    in_group = wait_for(lambda: connector.final_messages("19:group-chat@thread.v2"))[-1]
    assert SALARY not in in_group.text and "Salary bands" not in str(in_group.citations)
    alone = wait_for(lambda: connector.final_messages("a:boss-chat-untyped"))[-1]
    assert SALARY in alone.text, "a personal chat (not a 19: thread) still counts as one"
