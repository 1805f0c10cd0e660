"""Knowledge scopes in Slack, over real HTTP against the local Slack Web API: each channel answers from its
collections, access-listed documents reach only their readers (and members of their user groups) in a
direct message, admins change a channel's scope with /scope, and Show source and the Home tab keep to the
viewer's scope."""

from __future__ import annotations

import logging

import pytest

from tests.bot.harness import wait_for
from tests.bot.scoped import (
    ADMIN,
    BOSS,
    ENG,
    GENERAL,
    HR,
    LEAD,
    LEADS,
    LEAVE_DAYS,
    PLAIN,
    SALARY,
    ask_in,
    changing_index,  # noqa: F401 - a fresh index with changed documents
    scoped_index,  # noqa: F401 - the module's index
    shown,
    start_scoped_bot,
)
from tests.bot.slack_ui import buttons, open_home, press_in_view, published, publishes, view_text

LEAVE = "How many days of annual leave do I get?"
PAY = "How much do senior engineers earn?"


@pytest.fixture
def bot(scoped_index, slack, tmp_path):  # noqa: F811
    running = start_scoped_bot(scoped_index, tmp_path, slack.base_url)
    yield running
    running.stop()


def cited_files(bot, answer_id: str) -> list[str]:
    return [c.file for c in bot.services.feedback.answer(answer_id).citations]


def test_each_channel_answers_from_its_own_collections(bot, slack):
    message, answer_id = ask_in(bot, slack, HR, PLAIN, LEAVE)
    assert LEAVE_DAYS in shown(message) and "Leave policy › Annual leave" in shown(message)
    assert cited_files(bot, answer_id) and all(f.startswith("hr/") or "/" not in f for f in cited_files(bot, answer_id))
    assert bot.services.feedback.answer(answer_id).scope == "hr,public", "its votes count where hr is searched"
    for channel in (ENG, GENERAL):  # mapped to eng and public; unmapped: the default, public
        message, answer_id = ask_in(bot, slack, channel, PLAIN, LEAVE)
        assert LEAVE_DAYS not in shown(message) and "Leave policy" not in shown(message)
        assert not [f for f in cited_files(bot, answer_id) if f.startswith("hr/")]


def test_an_access_listed_document_is_quoted_only_in_a_direct_message_to_its_readers(bot, slack):
    slack.add_usergroup(LEADS, [LEAD])
    for channel, user in (("D0BOSS01", BOSS), ("D0LEAD01", LEAD)):  # listed by name; through the user group
        message, answer_id = ask_in(bot, slack, channel, user, PAY)
        assert SALARY in shown(message) and "hr/salaries.md" in cited_files(bot, answer_id)
    for channel, user in (("D0PLAIN1", PLAIN), (HR, BOSS)):  # not on the list; a channel, whoever asks
        message, answer_id = ask_in(bot, slack, channel, user, PAY)
        assert SALARY not in shown(message) and "Salary bands" not in shown(message)
        assert "hr/salaries.md" not in cited_files(bot, answer_id)
    lookups = slack.calls_to("usergroups.list")
    assert [c.args for c in lookups] == [{"include_users": True}], "looked up once, then kept"


def test_a_failed_group_lookup_keeps_the_document_from_group_members(bot, slack, caplog):
    slack.add_usergroup(LEADS, [LEAD])
    slack.fail_next("usergroups.list", "missing_scope")
    message, _ = ask_in(bot, slack, "D0LEAD01", LEAD, PAY)
    assert SALARY not in shown(message)
    assert "could not look up Slack user groups (missing_scope)" in caplog.text and "xoxb" not in caplog.text
    message, _ = ask_in(bot, slack, "D0BOSS01", BOSS, PAY)
    assert SALARY in shown(message), "people named on the list still read it"


def scope_command(bot, slack, user: str, text: str, key: str, channel: str = HR) -> str:
    assert bot.command("/scope", user, channel=channel, text=text, response_url=slack.response_url(key)).status_code == 200
    return wait_for(lambda: [c.args["text"] for c in slack.calls_to("response_url") if c.response_key == key])[0]


def test_scope_changes_the_next_answer_at_once_for_admins_only_and_is_audited(bot, slack, caplog):
    caplog.set_level(logging.INFO, logger="bot.core.scopes.command")
    overrides = bot.services.scopes.overrides
    refused = scope_command(bot, slack, PLAIN, "eng", "plain-set")
    assert refused.startswith("Sorry, only knowledge-base admins can change the scope.") and overrides.audit() == []
    seen = scope_command(bot, slack, PLAIN, "", "plain-show")
    assert seen.startswith("*Scope of this channel:* hr, public (from the scopes file).")
    assert "never quoted here" in seen and "Collections in the index" not in seen, "the index's list is for admins"

    changed = scope_command(bot, slack, ADMIN, "eng, public", "admin-set")
    assert changed == ("Scope of this channel is now *eng, public* (it was hr, public). It counts from the next "
                       "question.")
    message, _ = ask_in(bot, slack, HR, PLAIN, LEAVE)
    assert LEAVE_DAYS not in shown(message)
    unknown = scope_command(bot, slack, ADMIN, "hr,payroll", "admin-unknown")
    assert "now *hr, payroll*" in unknown and "no indexed document is in payroll yet — kept anyway" in unknown
    shown_to_admin = scope_command(bot, slack, ADMIN, "", "admin-show")
    assert f"hr, payroll (set by <@{ADMIN}> on " in shown_to_admin and "without it: hr, public, from the scopes file" \
        in shown_to_admin
    assert "*Collections in the index* (documents): eng (1), hr (2), public (1)" in shown_to_admin
    reset = scope_command(bot, slack, ADMIN, "reset", "admin-reset")
    assert reset.startswith("Override dropped: the scope of this channel is *hr, public* again (from the scopes file)")
    message, _ = ask_in(bot, slack, HR, PLAIN, LEAVE)
    assert LEAVE_DAYS in shown(message)
    audit = overrides.audit("slack", HR)
    assert [(a.user, a.old, a.new) for a in audit] == [
        (ADMIN, None, {"eng", "public"}), (ADMIN, {"eng", "public"}, {"hr", "payroll"}), (ADMIN, {"hr", "payroll"}, None)]
    assert overrides.audit("slack", ENG) == [], "only the channel it was typed in"
    logged = [r.getMessage() for r in caplog.records if r.name == "bot.core.scopes.command"]
    assert logged == [
        f"scope changed: platform=slack place={HR} user={ADMIN} 'hr,public' -> 'eng,public'",
        f"scope changed: platform=slack place={HR} user={ADMIN} 'eng,public' -> 'hr,payroll'",
        f"scope reset: platform=slack place={HR} user={ADMIN} 'hr,payroll' -> 'hr,public'"], "refusals: nothing"
    assert all(r.levelno == logging.INFO for r in caplog.records if r.name == "bot.core.scopes.command")


def show_source(bot, slack, channel: str, user: str, value: str) -> dict:
    before = len(slack.calls_to("views.open"))
    bot.interaction({"type": "block_actions", "user": {"id": user}, "team": {"id": "T0FAKE001"},
                     "trigger_id": f"trigger-{before}", "channel": {"id": channel}, "container": {"type": "message"},
                     "message": {"ts": "1700000000.000100"},
                     "actions": [{"action_id": "show_source", "block_id": "f", "type": "button", "value": value,
                                  "action_ts": "1"}]})
    return wait_for(lambda: slack.calls_to("views.open")[before:])[0].args["view"]


def source_values(message: dict) -> list[str]:
    return [b["accessory"]["value"] for b in message["blocks"]
            if b.get("accessory", {}).get("action_id") == "show_source"]


def test_show_source_refuses_a_passage_the_place_may_not_show(bot, slack):
    message, answer_id = ask_in(bot, slack, HR, PLAIN, LEAVE)
    value = next(v for v, f in zip(source_values(message), cited_files(bot, answer_id)) if f == "hr/leave.md")
    assert LEAVE_DAYS in view_text(show_source(bot, slack, HR, PLAIN, value))
    elsewhere = view_text(show_source(bot, slack, ENG, PLAIN, value))  # the same button value, sent from #eng
    assert elsewhere.startswith("Sorry, I can't show that source here") and LEAVE_DAYS not in elsewhere

    message, answer_id = ask_in(bot, slack, "D0BOSS01", BOSS, PAY)
    value = next(v for v, f in zip(source_values(message), cited_files(bot, answer_id)) if f == "hr/salaries.md")
    assert SALARY in view_text(show_source(bot, slack, "D0BOSS01", BOSS, value))
    for channel, user in (("D0PLAIN1", PLAIN), (HR, BOSS)):
        refused = show_source(bot, slack, channel, user, value)
        assert SALARY not in view_text(refused) and not buttons(refused)


def test_the_home_tab_and_the_assistant_pane_name_only_documents_the_viewer_may_read(bot, slack):
    open_home(bot, slack, PLAIN)
    member = view_text(published(slack, PLAIN))
    assert "*2 documents*" in member and "Leave policy" in member and "Welcome" in member
    assert "Deployments" not in member and "Salary bands" not in member
    open_home(bot, slack, BOSS)
    boss = view_text(published(slack, BOSS))
    assert "*3 documents*" in boss and "Salary bands" in boss and "Deployments" not in boss
    open_home(bot, slack, ADMIN)  # the admins' review lists the whole index
    admin = view_text(published(slack, ADMIN))
    assert "4 files" in admin

    thread = {"user_id": PLAIN, "context": {}, "channel_id": "D0PLAIN1", "thread_ts": "1700000000.000100"}
    bot.event({"type": "assistant_thread_started", "assistant_thread": thread, "event_ts": "1700000000.000200"})
    prompts = wait_for(lambda: slack.calls_to("assistant.threads.setSuggestedPrompts"))[0].args["prompts"]
    asked = " ".join(p["message"] for p in prompts)
    assert "Leave policy" in asked and "Deployments" not in asked and "Salary bands" not in asked


def test_a_reindex_report_names_only_the_files_its_readers_may_read(changing_index, slack, tmp_path):
    bot = start_scoped_bot(changing_index, tmp_path, slack.base_url)
    try:
        assert bot.command("/reindex", ADMIN, channel=ENG).status_code == 200
        report = wait_for(lambda: [c.args["text"] for c in slack.calls_to("chat.update")
                                   if c.args.get("channel") == ENG and "Reindex finished" in c.args["text"]],
                          timeout=300)[0]
        assert "Added 2 · changed 1 · removed 1" in report, "the totals stay whole"
        assert "*Added:* `eng/oncall.md` and 1 more outside this conversation's scope" in report
        assert "*Changed:* 1 outside this conversation's scope" in report, "access-listed: never in a channel"
        assert "*Removed:* `eng/deploy.md`" in report, "a removed file of the channel's collection"
        assert "hr/" not in report
        assert bot.services.reindexer.last.ok
    finally:
        bot.stop()


def test_the_admins_review_keeps_to_the_admins_own_scope(bot, slack):
    feedback = bot.services.feedback
    asked = [(HR, PLAIN, LEAVE, "hr/leave.md"), (ENG, PLAIN, "When do production deployments leave?", "eng/deploy.md"),
             ("D0BOSS01", BOSS, PAY, "hr/salaries.md")]
    for channel, user, question, file in asked:
        _, answer_id = ask_in(bot, slack, channel, user, question)
        files = cited_files(bot, answer_id)
        assert file in files, (question, files)
        feedback.vote(answer_id, user, "answer", -1, channel)
        feedback.vote(answer_id, user, f"citation:{files.index(file) + 1}", -1, channel)
    # A refusal cites nothing, but names the documents its asker could read that come close.
    refused = "What do senior engineers in salary band E4 not earn?"
    message, answer_id = ask_in(bot, slack, "D0BOSS01", BOSS, refused)
    assert "You might look at:" in shown(message) and "(hr/salaries.md)" in shown(message)
    feedback.vote(answer_id, BOSS, "answer", -1, "D0BOSS01")

    open_home(bot, slack, ADMIN)  # dm: [hr, public], and the admin is not on the salaries' access list
    admin = view_text(published(slack, ADMIN)).replace("&gt;", ">")
    assert "“How many days of annual leave do I get?”" in admin and "`hr/leave.md`" in admin
    assert "production deployments" not in admin and "eng/deploy.md" not in admin
    assert "senior engineers" not in admin and "salaries" not in admin and SALARY not in admin
    assert "Salary bands" not in admin and "salary band E4" not in admin
    assert "3 more down-voted answers outside your scope" in admin
    assert "2 more flagged passages outside your scope" in admin
    assert "*Documents with the most flags:* `hr/leave.md` (1) · and 2 more outside your scope" in admin

    # A hand-made Confirm of a passage outside the admin's scope changes nothing and names nothing.
    salaries = next(c for c in feedback.citation_votes() if c.cited.file == "hr/salaries.md")
    after = publishes(slack, ADMIN)
    press_in_view(bot, published(slack, ADMIN), ADMIN, "home_confirm_demotion", salaries.chunk_id)
    notice = view_text(published(slack, ADMIN, after))
    assert "That passage is not in your review, so nothing changed." in notice
    assert salaries.cited.location not in notice and feedback.verdicts() == []
