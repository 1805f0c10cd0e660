"""Declared sources kept in sync by the bot itself, seen and run from Slack: the real app over HTTP against the
local Slack Web API, folder and git sources made in the test. A page edited, added or deleted at the source
is answered (or no longer quoted) after the next scheduled or watched sync; `/reindex NAME` syncs that one;
the mass-delete guard waits for its word; a scheduled failure is told once to the admin who synced it, and
shows in the Home tab and on /metrics."""

from __future__ import annotations

import re
import shutil
import time

import httpx
import pytest

from bot.core.reindex import BUSY
from tests.bot.harness import start_bot, wait_for
from tests.bot.slack_ui import ask, open_home, published, view_text
from tests.bot.sources_kit import (
    HANDBOOK_URL,
    HOTELS,
    HOTELS_EDITED,
    MEALS,
    PARKING,
    RESTART,
    VISA,
    files,
    idle,
    served,
    sources_file,
    status,
    write,
)
from tests.fakes.git_http import GitHttpServer
from tests.fakes.website import FakeWebsite, page
from tests.rag.sources.test_git import Origin

ADMIN, MEMBER = "U0ADMIN01", "U0PLAIN01"
TOKEN = "ghp-serve-test-token-5d1e"


def run(slack, tmp_path, shared_data_dir, sources):
    return start_bot(shared_data_dir, tmp_path / "index", slack.base_url, sources_file=sources,
                     chat_settings={"AIE_SCOPES_DB": str(tmp_path / "scopes.sqlite3")},
                     feedback_db=tmp_path / "feedback.sqlite3")


def answered(bot, slack, question: str) -> tuple[str, list[str]]:
    """The answer's text as the user reads it and the links of its footnotes."""
    message, _ = ask(bot, slack, question, user=MEMBER)
    blocks = message["blocks"]
    text = "".join(b["text"] for b in blocks if b["type"] == "markdown").replace("&amp;", "&")
    footnotes = " ".join(b["text"]["text"] for b in blocks if b.get("accessory", {}).get("action_id") == "show_source")
    return text, re.findall(r"<(https?://[^|>]+)\|", footnotes)


def reports(slack, word: str = "Sync") -> list[str]:
    """The texts of the bot's sync messages (posted, then updated in place), in order."""
    return [c.args["text"] for c in slack.calls_to("chat.postMessage") + slack.calls_to("chat.update")
            if word in c.args.get("text", "") and c.ok]


def finished(slack, before: int) -> str:
    """The report of the sync started after `before` reports were sent."""
    return wait_for(lambda: [t for t in reports(slack)[before:] if t.startswith((":white_check_mark:", ":x:"))],
                    timeout=180)[0]


def reindex(bot, slack, text: str = "", user: str = ADMIN) -> tuple[str, str]:
    """`/reindex text` by `user`: what Slack showed them at once, and the report it ended with."""
    while True:  # the schedule may start a sync between the look and the command: then ask again
        idle(bot)
        before = len(reports(slack))
        ack = bot.command("/reindex", user, text=text).text
        if ack != BUSY:
            return ack, finished(slack, before)


def test_a_scheduled_sync_answers_an_edited_an_added_and_no_longer_a_deleted_page(slack, tmp_path, shared_data_dir):
    folder = write(tmp_path / "hb", {"hotels.md": HOTELS, "meals.md": MEALS, "visa.md": VISA})
    sources = sources_file(tmp_path, f"{{name: handbook, type: folder, path: {folder}, every: 2s, url: '{HANDBOOK_URL}'}}")
    bot = run(slack, tmp_path, shared_data_dir, sources)
    try:
        served(bot, "handbook/hotels.md", "handbook/meals.md")  # the first sync: at start, without any command
        text, links = answered(bot, slack, "How much is a hotel night in London?")
        assert "220 EUR" in text and any(u.startswith("https://git.example.com/handbook/blob/main/hotels.md")
                                         for u in links)

        write(folder, {"hotels.md": HOTELS_EDITED, "parking.md": PARKING, "meals.md": None})
        served(bot, "handbook/parking.md", absent=("handbook/meals.md",))
        text, links = answered(bot, slack, "How much is a hotel night in London?")
        assert "260 EUR" in text and "220 EUR" not in text
        assert any(u.startswith("https://git.example.com/handbook/blob/main/hotels.md") for u in links)
        text, links = answered(bot, slack, "How are parking spaces assigned?")
        assert "lottery" in text and any(u.startswith("https://git.example.com/handbook/blob/main/parking.md")
                                         for u in links)
        text, links = answered(bot, slack, "What is the daily meal allowance on business trips?")
        assert "45 EUR" not in text and not [u for u in links if "meals.md" in u]
        assert not reports(slack), "nobody asked: the schedule's syncs post nothing"
    finally:
        bot.stop()


def test_a_watched_folder_answers_a_new_page_within_seconds(slack, tmp_path, shared_data_dir):
    folder = write(tmp_path / "hb", {"hotels.md": HOTELS, "visa.md": VISA})
    sources = sources_file(tmp_path, f"{{name: handbook, type: folder, path: {folder}, watch: true, url: '{HANDBOOK_URL}'}}")
    bot = run(slack, tmp_path, shared_data_dir, sources)
    try:
        served(bot, "handbook/hotels.md")  # never synced: the watch starts with a sync
        write(folder, {"parking.md": PARKING})
        seconds = served(bot, "handbook/parking.md", timeout=60)
        assert seconds < 20, f"a new file took {seconds:.1f} s to be served"
        text, links = answered(bot, slack, "How are parking spaces assigned?")
        assert "lottery" in text and any("parking.md" in u for u in links)
        write(folder, {"parking.md": None})
        served(bot, "handbook/hotels.md", absent=("handbook/parking.md",), timeout=60)
    finally:
        bot.stop()


def test_a_web_source_stuck_on_a_slow_page_holds_up_neither_a_watched_folder_nor_a_reindex(slack, tmp_path,
                                                                                          shared_data_dir):
    handbook = write(tmp_path / "hb", {"hotels.md": HOTELS})
    ops = write(tmp_path / "ops", {"restart.md": RESTART})
    with FakeWebsite() as site:
        site.put("/docs/", page("Policies", [("Welcome", "Every company policy, kept by HR.")], ["visa"]))
        site.put("/docs/visa", page("Visas", [("Fees", "Visa fees are paid by the travel desk.")]))
        site.trickle("/docs/visa", 0.2)  # a byte every 0.2 s: the schedule's crawl waits for it 2 minutes
        sources = sources_file(tmp_path, f"{{name: handbook, type: folder, path: {handbook}, watch: true}}",
                               f"{{name: ops, type: folder, path: {ops}}}",
                               f"{{name: intranet, type: web, url: '{site.url}/docs/', delay: 0, every: 1h}}")
        bot = start_bot(shared_data_dir, tmp_path / "index", slack.base_url, sources_file=sources,
                        feedback_db=tmp_path / "feedback.sqlite3", web_request_timeout=120)
        try:
            wait_for(lambda: site.hits_for("/docs/visa"), timeout=60)
            wait_for(lambda: "handbook/hotels.md" in files(bot), timeout=60)  # the watch's first sync
            write(handbook, {"parking.md": PARKING})
            wait_for(lambda: "handbook/parking.md" in files(bot), timeout=30)
            before = len(reports(slack))
            assert bot.command("/reindex", ADMIN, text="ops").text == "Syncing `ops`… I'll post progress here."
            report = finished(slack, before)
            assert report.startswith(":white_check_mark: Sync finished") and "• `ops`: fetched 1" in report
            assert "ops/restart.md" in files(bot)
            assert not [n for n in files(bot) if n.startswith("intranet/")] and bot.services.reindexer.running, \
                "all the while, the crawl was still waiting for the slow page"
        finally:
            bot.stop()


def test_reindex_names_the_sources_to_sync_and_the_mass_delete_guard_waits_for_its_word(slack, tmp_path,
                                                                                         shared_data_dir):
    handbook = write(tmp_path / "hb", {"hotels.md": HOTELS, "meals.md": MEALS, "visa.md": VISA})
    ops = write(tmp_path / "ops", {"restart.md": RESTART})
    sources = sources_file(tmp_path, f"{{name: handbook, type: folder, path: {handbook}}}",
                           f"{{name: ops, type: folder, path: {ops}, collection: public}}")
    bot = run(slack, tmp_path, shared_data_dir, sources)
    try:
        ack, report = reindex(bot, slack)
        assert ack == "Syncing every source… I'll post progress here."
        assert "• `handbook`: fetched 3 · removed 0 · kept 0" in report and "• `ops`: fetched 1" in report
        assert "Sync finished" in report and "Added 4" in report

        write(handbook, {"hotels.md": HOTELS_EDITED})
        write(ops, {"restart.md": RESTART + "\nPage the on-call engineer first.\n"})
        ack, report = reindex(bot, slack, "handbook")
        assert ack == "Syncing `handbook`… I'll post progress here."
        assert "• `handbook`: fetched 1 · removed 0 · kept 0" in report and "`ops`" not in report
        assert "Changed:* `handbook/hotels.md`" in report
        assert status(bot, "ops").last_success < status(bot, "handbook").last_success, "ops was not synced"

        unknown = bot.command("/reindex", ADMIN, text="handbok").text
        assert unknown == "There is no source named `handbok`. The sources are: `handbook`, `ops`."

        write(handbook, {"meals.md": None, "visa.md": None})
        _, report = reindex(bot, slack, "handbook")
        assert report.startswith(":x:") and "would remove 2 of its 3 documents" in report
        assert "If that is intended, send `/reindex handbook allow-mass-delete`." in report
        assert "handbook/visa.md" in files(bot), "nothing was removed"
        _, report = reindex(bot, slack, "handbook allow-mass-delete")
        assert "Removed:* `handbook/meals.md`, `handbook/visa.md`" in report
        assert not files(bot) & {"handbook/meals.md", "handbook/visa.md"}
    finally:
        bot.stop()


def test_a_member_cannot_sync_a_source(slack, tmp_path, shared_data_dir):
    handbook = write(tmp_path / "hb", {"hotels.md": HOTELS})
    bot = run(slack, tmp_path, shared_data_dir, sources_file(tmp_path, f"{{name: handbook, type: folder, path: {handbook}}}"))
    try:
        acked = bot.command("/reindex", MEMBER, text="handbook", response_url=slack.response_url("member"))
        assert "Checking" in acked.text
        told = wait_for(lambda: [c.args["text"] for c in slack.calls_to("response_url") if c.response_key == "member"])
        assert told == ["Sorry, only knowledge-base admins can run `/reindex`. Ask one of them if documents look "
                        "out of date."]
        time.sleep(1)
        assert bot.services.reindexer.last is None and status(bot, "handbook").last_attempt is None
        assert "handbook" not in view_text(published_home(bot, slack, MEMBER)), "the sources are for admins"
    finally:
        bot.stop()


def published_home(bot, slack, user: str, after: int = 0) -> dict:
    open_home(bot, slack, user)
    return published(slack, user, after=after)


@pytest.fixture
def git_server(tmp_path, monkeypatch):
    origin = Origin(tmp_path / "git")
    origin.commit({"deploy.md": "# Deploy\n\nDeploys go out with make deploy, on weekdays before 3 pm.\n"})
    monkeypatch.setenv("RUNBOOKS_TOKEN", TOKEN)
    with GitHttpServer(origin.bare.parent, token=TOKEN) as server:
        yield server


def test_a_failing_source_is_told_once_to_the_admin_who_synced_it_and_shows_in_the_home_tab_and_metrics(
        slack, tmp_path, shared_data_dir, git_server):
    handbook = write(tmp_path / "hb", {"hotels.md": HOTELS, "visa.md": VISA})
    sources = sources_file(
        tmp_path, f"{{name: handbook, type: folder, path: {handbook}, every: 1s}}",
        f"{{name: runbooks, type: git, url: '{git_server.url('docs.git')}', token_env: RUNBOOKS_TOKEN, every: 1s}}")
    bot = run(slack, tmp_path, shared_data_dir, sources)
    try:
        served(bot, "handbook/hotels.md", "runbooks/deploy.md")
        _, report = reindex(bot, slack)  # the admin syncs them: whom to tell when they fail later
        assert "• `runbooks`: fetched 0" in report and status(bot, "runbooks").by == "U0ADMIN01 (slack)"

        shutil.move(handbook, tmp_path / "hb-unmounted")
        git_server.token = "rotated-on-the-server"  # the token in RUNBOOKS_TOKEN is now refused
        wait_for(lambda: status(bot, "handbook").failures >= 3 and status(bot, "runbooks").failures >= 3, timeout=120)
        idle(bot)
        told = [c.args["text"] for c in slack.calls_to("chat.postMessage") if c.args.get("channel") == ADMIN]
        assert len(told) == 2, told
        handbook_dm = next(t for t in told if "`handbook`" in t)
        runbooks_dm = next(t for t in told if "`runbooks`" in t)
        assert handbook_dm.startswith(":x: The scheduled sync of source `handbook` failed: ")
        assert "missing or unreadable" in handbook_dm and "`/reindex handbook`" in handbook_dm
        assert "refused the credentials" in runbooks_dm and "check RUNBOOKS_TOKEN" in runbooks_dm
        assert all(TOKEN not in c.args.get("text", "") for c in slack.calls), "no token in any message"
        assert status(bot, "runbooks").told and status(bot, "runbooks").by == "U0ADMIN01 (slack)"
        assert {"handbook/hotels.md", "runbooks/deploy.md"} <= files(bot), "a failed sync deletes nothing"

        home = view_text(published_home(bot, slack, ADMIN))
        assert "Sources" in home and "*handbook* · folder · collection `public` · 2 documents" in home
        assert "*runbooks* · git" in home and "check RUNBOOKS_TOKEN" in home and "failed in a row" in home

        metrics = httpx.get(f"{bot.url}/metrics", timeout=10).text
        assert 'aie_source_documents{source="handbook"} 2.0' in metrics
        assert 'aie_source_documents{source="runbooks"} 1.0' in metrics
        assert re.search(r'aie_source_failures\{source="runbooks"\} [3-9]', metrics)
        assert re.search(r'aie_source_last_success_timestamp_seconds\{source="runbooks"\} 1\.\d+e\+09', metrics)
        assert re.search(r'aie_source_sync_seconds_count\{result="failed",source="runbooks"\} [1-9]', metrics)
        assert re.search(r'aie_source_sync_seconds_count\{result="ok",source="handbook"\} [1-9]', metrics)
    finally:
        bot.stop()
