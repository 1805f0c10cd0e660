"""The App Home tab over HTTP against the local Slack API (which validates every views.publish): the admins'
review (index status, down-voted answers, flagged passages with confirm / undo / show, reindex now) and
what everyone else sees; and, built directly, that long lists still fit Slack's limits."""

from __future__ import annotations

import threading
import time

from bot.core.reindex import ReindexRun, run_text
from bot.slack.blocks import SLACK_STYLE
from bot.slack.home import AdminHome, admin_home, user_home
from rag.index.snapshot import FileRecord, Manifest
from tests.bot.harness import wait_for
from tests.bot.slack_ui import (
    ask,
    buttons,
    open_home,
    press_in_view,
    published,
    publishes,
    submit,
    thumbs,
    view_text,
    vote_on_source,
)
from tests.fakes.slack_api import SECTION_TEXT_LIMIT, view_problems

ADMIN_ACTIONS = {"home_reindex", "home_confirm_demotion", "home_undo_demotion", "home_show_passage"}


def passage_status(view: dict, location: str) -> str | None:
    """The status line of a flagged passage as the Home tab shows it (None: not listed)."""
    for block in view["blocks"]:
        text = block.get("text", {}).get("text", "")
        status = [line for line in text.splitlines() if line.startswith("Status:")]
        if block["type"] == "section" and status and location in text.replace("&gt;", ">").replace("&amp;", "&"):
            return status[0]
    return None


def test_the_admin_home_shows_the_index_and_the_feedback_and_acts_on_it(bot, slack):
    message, answer_id = ask(bot, slack, "How long must a password be?")
    thumbs(bot, message, answer_id, "U0PLAIN01", up=False, trigger_id="trigger-down")
    reason_modal = wait_for(lambda: slack.calls_to("views.open"))[0].response["view"]
    submit(bot, reason_modal, "U0PLAIN01", {
        "reason": {"reason": {"type": "radio_buttons", "selected_option": {"value": "outdated"}}},
        "comment": {"comment": {"type": "plain_text_input", "value": "We moved to passphrases in 2026."}}})
    vote_on_source(bot, slack, message, 1, "U0PLAIN01", helped=False)
    cited = bot.services.feedback.answer(answer_id).citations[0]

    open_home(bot, slack, "U0ADMIN01")
    home = published(slack, "U0ADMIN01")
    text = view_text(home)
    manifest = bot.kb.store.current_manifest()
    assert f"version `{manifest.version}` · {len(manifest.files)} files · {manifest.chunk_count} passages" in text
    assert "No reindex from Slack since the bot started" in text
    assert "“How long must a password be?”" in text and ":thumbsdown: 1 · :thumbsup: 0" in text
    assert "Reasons: Outdated ×1" in text and "We moved to passphrases in 2026." in text
    assert cited.location in text and "Flagged by <@U0PLAIN01>" in text
    assert passage_status(home, cited.location).startswith("Status: *pending*")
    assert {b["action_id"] for b in buttons(home)} == ADMIN_ACTIONS

    press_in_view(bot, home, "U0ADMIN01", "home_confirm_demotion", cited.chunk_id)
    confirmed = published(slack, "U0ADMIN01", after=1)
    assert "Demotion confirmed" in view_text(confirmed) and cited.location in view_text(confirmed)
    assert passage_status(confirmed, cited.location).startswith("Status: *demoted* (admin)")
    assert [(a.chunk_id, a.status) for a in bot.services.adjuster.adjustments()] == [(cited.chunk_id, "demoted")]
    assert [(o.chunk_id, o.action, o.user) for o in bot.services.feedback.verdicts()] == [
        (cited.chunk_id, "confirm", "U0ADMIN01")]

    press_in_view(bot, confirmed, "U0ADMIN01", "home_undo_demotion", cited.chunk_id)
    undone = published(slack, "U0ADMIN01", after=2)
    assert "Undone for" in view_text(undone) and passage_status(undone, cited.location) is None
    assert not [a for a in bot.services.adjuster.adjustments() if a.status == "demoted"]

    opened = len(slack.calls_to("views.open"))
    press_in_view(bot, undone, "U0ADMIN01", "home_show_passage", cited.chunk_id, trigger_id="trigger-passage")
    shown = wait_for(lambda: slack.calls_to("views.open")[opened:])[0]
    assert shown.args["trigger_id"] == "trigger-passage"
    passage = view_text(shown.response["view"])
    assert cited.text[:80] in passage and "Voted on for these questions:*\n• How long must a password be?" in passage
    assert not buttons(shown.response["view"])

    press_in_view(bot, undone, "U0ADMIN01", "home_reindex")
    wait_for(lambda: publishes(slack, "U0ADMIN01") >= 5, timeout=300)
    dm = [c.args["text"] for c in slack.calls_to("chat.postMessage") + slack.calls_to("chat.update")
          if c.args.get("channel") == "U0ADMIN01"]
    report = run_text(bot.services.reindexer.last, SLACK_STYLE)
    assert report in dm and report.startswith(":white_check_mark:"), dm
    after = view_text(published(slack, "U0ADMIN01", after=4))
    assert "Reindex finished" in after and "Last reindex" in after and report in after


def test_reindex_now_is_refused_politely_while_one_runs(bot, slack):
    release = threading.Event()
    refresh = bot.services.reindexer.refresh

    def slow_refresh(progress):
        release.wait(60)
        return refresh(progress)

    bot.services.reindexer.refresh = slow_refresh
    bot.command("/reindex", "U0OWNER01", response_url=slack.response_url("owner"))
    try:
        wait_for(lambda: bot.services.reindexer.running)
        open_home(bot, slack, "U0ADMIN01")
        home = published(slack, "U0ADMIN01")
        assert "A reindex is running" in view_text(home) and "by <@U0OWNER01>" in view_text(home)
        assert "home_reindex" not in {b["action_id"] for b in buttons(home)}
        press_in_view(bot, home, "U0ADMIN01", "home_reindex", "reindex")  # e.g. from a Home tab published before
        told = wait_for(lambda: [c for c in slack.calls_to("chat.postMessage") if c.args["channel"] == "U0ADMIN01"])
        assert told[0].args["text"] == "A reindex is already running; its report will show in my Home tab when it finishes."
    finally:
        release.set()
    wait_for(lambda: bot.services.reindexer.last is not None, timeout=300)
    assert bot.services.reindexer.last.by == "U0OWNER01", "the running reindex was the only one"
    assert len([c for c in slack.calls_to("chat.postMessage") if c.args["channel"] == "U0ADMIN01"]) == 1


def test_a_members_home_shows_what_it_knows_how_to_ask_and_example_questions(bot, slack):
    open_home(bot, slack, "U0PLAIN01")
    home = published(slack, "U0PLAIN01")
    text = view_text(home)
    manifest = bot.kb.store.current_manifest()
    assert not buttons(home), "no admin controls"
    assert f"*{len(manifest.files)} documents* · {manifest.chunk_count} passages" in text
    assert f"handbook* — {len(manifest.files)} documents" in text
    for record in manifest.files.values():
        assert record.title in text
    assert "mention <@U0FAKEBOT>" in text and "Messages" in text and "Follow-ups" in text and "Assistant pane" in text
    examples = text.split("Try asking", 1)[1].strip().splitlines()
    assert len(set(examples)) == 4, examples
    assert all(any(r.title in e for r in manifest.files.values()) for e in examples), examples
    assert "• What are the key points of “IT Security Policy”?" in examples  # the biggest documents,
    assert "• 中国区差旅报销制度有哪些要点？" in examples  # in both of the handbook's languages

    # Opening it again does not ask Slack again who is an admin (cached), and the Messages tab publishes nothing.
    open_home(bot, slack, "U0PLAIN01")
    open_home(bot, slack, "U0PLAIN01", tab="messages")
    wait_for(lambda: publishes(slack, "U0PLAIN01") == 2)
    time.sleep(0.5)
    assert publishes(slack, "U0PLAIN01") == 2
    assert [c.args["user"] for c in slack.calls_to("users.info")] == ["U0PLAIN01"]

    # A member pressing an admin button (e.g. from an old Home tab) changes nothing.
    message, answer_id = ask(bot, slack, "How long must a password be?")
    vote_on_source(bot, slack, message, 1, "U0PLAIN02", helped=False)
    chunk = bot.services.feedback.answer(answer_id).citations[0].chunk_id
    press_in_view(bot, home, "U0PLAIN01", "home_confirm_demotion", chunk)
    assert not buttons(published(slack, "U0PLAIN01", after=2))
    assert bot.services.feedback.verdicts() == []


# ------------------------------------------------------------------------------------- Slack's limits


def big_manifest(files: int = 600, folders: int = 30) -> Manifest:
    records = {f"folder-{n % folders:02d}/sub/document-{n:04d}.md": FileRecord(
        hash="h", size=1, chunks=n % 7 + 1, parser="markdown", title=f"A rather long document title number {n} " * 3)
        for n in range(files)}
    return Manifest(version="v1", created="2026-11-30T10:00:00+00:00", roots=["/docs"], embedding_model="m", dim=1,
                    tokenizer="t", chunking={}, dense_index="flat", chunk_count=files * 4, files=records)


def big_review(n: int = 60) -> dict:
    answers = [{"answer_id": f"a{i}", "question": "Why? " * 200, "answer": "Because. " * 400, "down_votes": 3,
                "up_votes": 0, "reasons": {"outdated": 2, "other": 1}, "comments": ["x" * 3000] * 5,
                "channel": "C0GENERAL", "platform": "slack", "last_vote": 1.7e9} for i in range(n)]
    passages = [{"chunk_id": f"c{i:040d}", "file": "f.md", "location": "Policy › Section " * 30, "text": "t " * 2000,
                 "flaggers": [f"U0{j:07d}" for j in range(40)], "helpers": [f"U1{j:07d}" for j in range(40)],
                 "admin": False, "strength": 2.0, "last_vote": 1.7e9, "questions": ["q"], "status": "pending"}
                for i in range(n)]
    return {"answers": answers, "passages": passages, "documents": [{"file": f"f{i}.md", "flags": 2} for i in range(n)]}


def test_long_lists_fit_the_home_tab_and_say_how_many_were_left_out(slack):
    from slack_sdk import WebClient

    last = ReindexRun("U0ADMIN01", 1.7e9, 1.7e9 + 60, None, "a reason. " * 900)
    views = {"admin": admin_home(AdminHome(big_manifest(), big_review(), last=last, notice="n" * 5000)),
             "member": user_home(big_manifest(), "U0FAKEBOT", notice="n" * 5000)}
    client = WebClient(token="xoxb-test", base_url=slack.base_url)
    for who, view in views.items():
        assert len(view["blocks"]) <= 100 and not view_problems(view, ("home",)), who
        assert all(len(b["text"]["text"]) <= SECTION_TEXT_LIMIT for b in view["blocks"] if b["type"] == "section")
        assert client.views_publish(user_id="U0ADMIN01", view=view)["ok"]
    admin, member = view_text(views["admin"]), view_text(views["member"])
    assert "… and 50 more down-voted answers" in admin and "… and 45 more flagged passages" in admin
    assert "and 30 more" in admin  # flaggers and helpers beyond ten
    assert "· and 5 more" in member  # titles beyond fifteen in a folder
    assert "… and 20 more folders (400 documents)." in member


def test_without_an_index_the_home_tab_says_how_to_build_one():
    admin = view_text(admin_home(AdminHome(None, {"answers": [], "passages": [], "documents": []})))
    assert "*Index:* none yet. *Reindex now* builds it" in admin and "No down-voted answers" in admin
    member = user_home(None, "U0FAKEBOT")
    assert "No documents yet — an admin can build the knowledge base with `/reindex`." in view_text(member)
    assert "Try asking" not in view_text(member) and not view_problems(member, ("home",))
