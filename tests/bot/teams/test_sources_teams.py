"""Declared sources seen and run from Teams: the real app over HTTP (the SDK's anonymous local mode) against
the local Bot Connector, a folder source made in the test. An admin's `reindex handbook` syncs it; answers
follow the page edited, added and deleted at the source, with citations linking to it; `sources` shows the
table to admins only; a scheduled failure is told once in the admin's personal chat."""

from __future__ import annotations

import itertools
import shutil

from bot.core.reindex import BUSY
from bot.teams.config import TeamsSettings
from tests.bot.harness import start_bot, wait_for
from tests.bot.sources_kit import (
    HANDBOOK_URL,
    HOTELS,
    HOTELS_EDITED,
    MEALS,
    PARKING,
    VISA,
    idle,
    served,
    sources_file,
    status,
    write,
)
from tests.bot.teams_ui import ADMIN, MEMBER, activity, post

ADMIN_CHAT = "a:admin-personal-chat"
MEMBER_CHAT = "a:member-personal-chat"
_chats = itertools.count(1)


def start(tmp_path, shared_data_dir, sources):
    teams = TeamsSettings(_env_file=None, anonymous_allowed=True, admin_ids=ADMIN)
    return start_bot(shared_data_dir, tmp_path / "index", None, teams=teams, sources_file=sources,
                     feedback_db=tmp_path / "feedback.sqlite3",
                     chat_settings={"AIE_SCOPES_DB": str(tmp_path / "scopes.sqlite3")})


def reply_to(bot, connector, text: str, conversation: str, user: str):
    """Send `text`; the bot's first reply in that conversation after it (asked again while a sync runs)."""
    while True:
        idle(bot)
        before = len(connector.messages_in(conversation))
        post(bot, activity(connector, text, conversation=conversation, user=user))
        reply = wait_for(lambda: connector.messages_in(conversation)[before:])[0]
        if reply.text != BUSY:
            return reply


def say(bot, connector, text: str, conversation: str, user: str) -> str:
    return reply_to(bot, connector, text, conversation, user).text


def sources_table(bot, connector) -> tuple[str, dict[str, dict[str, str]]]:
    """The admin's `sources` reply: its text, and each source's facts as the card shows them."""
    reply = reply_to(bot, connector, "sources", ADMIN_CHAT, ADMIN)
    (attachment,) = reply.body["attachments"]
    assert attachment["contentType"] == "application/vnd.microsoft.card.adaptive"
    card = attachment["content"]
    assert card["type"] == "AdaptiveCard" and card["body"][0]["text"] == "Sources"
    rows = {}
    for container in [b for b in card["body"] if b["type"] == "Container"]:
        name, facts = container["items"]
        rows[name["text"]] = {f["title"]: f["value"] for f in facts["facts"]}
    return reply.text, rows


def synced(bot, connector, text: str) -> str:
    """The final report of an admin's sync command in their personal chat."""
    before = len(connector.calls_to(ADMIN_CHAT))
    say(bot, connector, text, ADMIN_CHAT, ADMIN)
    return wait_for(lambda: [c.text for c in connector.calls_to(ADMIN_CHAT)[before:]
                             if c.text.startswith(("✅", "❌"))], timeout=180)[0]


def answered(connector, bot, question: str) -> tuple[str, list[str]]:
    """A member's answer (in a chat of its own) and the URLs its citations open."""
    chat = f"a:member-question-{next(_chats)}"
    post(bot, activity(connector, question, conversation=chat, user=MEMBER))
    final = wait_for(lambda: connector.final_messages(chat))[0]
    return final.text, [c["appearance"].get("url") or "" for c in final.citations]


def test_teams_syncs_shows_and_tells_the_sources_and_answers_follow_the_source(tmp_path, shared_data_dir,
                                                                             connector):
    folder = write(tmp_path / "hb", {"hotels.md": HOTELS, "meals.md": MEALS, "visa.md": VISA})
    sources = sources_file(tmp_path, f"{{name: handbook, type: folder, path: {folder}, every: 2s, url: '{HANDBOOK_URL}'}}")
    bot = start(tmp_path, shared_data_dir, sources)
    try:
        served(bot, "handbook/hotels.md")
        report = synced(bot, connector, "reindex handbook")
        assert report.startswith("✅ Sync finished:") and "• `handbook`: fetched 0 · removed 0 · kept 0" in report
        assert status(bot, "handbook").by == f"{ADMIN} (teams)"
        text, links = answered(connector, bot, "How much is a hotel night in London?")
        assert "220 EUR" in text and any(u.startswith("https://git.example.com/handbook/blob/main/hotels.md") for u in links)

        write(folder, {"hotels.md": HOTELS_EDITED, "parking.md": PARKING, "meals.md": None})
        served(bot, "handbook/parking.md", absent=("handbook/meals.md",))
        text, links = answered(connector, bot, "How much is a hotel night in London?")
        assert "260 EUR" in text and "220 EUR" not in text and any("hotels.md" in u for u in links)
        text, links = answered(connector, bot, "How are parking spaces assigned?")
        assert "lottery" in text and any(u.startswith("https://git.example.com/handbook/blob/main/parking.md")
                                         for u in links)
        text, links = answered(connector, bot, "What is the daily meal allowance on business trips?")
        assert "45 EUR" not in text and not [u for u in links if "meals.md" in u]

        text, table = sources_table(bot, connector)
        assert text == "1 source" and set(table) == {"handbook"}
        facts = table["handbook"]
        assert (facts["Type"], facts["Collection"], facts["Documents"]) == ("folder", "public", "3")
        assert facts["Last sync"].startswith("20") and facts["Last sync"].endswith(" UTC") and "Last error" not in facts
        refused = say(bot, connector, "sources", MEMBER_CHAT, MEMBER)
        assert refused == "Sorry, only knowledge-base admins can see the sources' syncs."
        unknown = say(bot, connector, "reindex handbok", ADMIN_CHAT, ADMIN)
        assert unknown == "There is no source named `handbok`. The sources are: `handbook`."
        assert say(bot, connector, "reindex handbook", MEMBER_CHAT, MEMBER).startswith("Sorry, only knowledge-base admins")

        told_before = len(connector.messages_in(ADMIN_CHAT))
        shutil.move(folder, tmp_path / "hb-unmounted")
        wait_for(lambda: status(bot, "handbook").failures >= 3, timeout=120)
        idle(bot)
        told = [c.text for c in connector.messages_in(ADMIN_CHAT)[told_before:]]
        assert len(told) == 1 and told[0].startswith("❌ The scheduled sync of source `handbook` failed: ")
        assert "missing or unreadable" in told[0] and "`reindex handbook`" in told[0]
        text, table = sources_table(bot, connector)
        assert text == "1 source, 1 failing" and table["handbook"]["Documents"] == "3"
        assert "missing or unreadable" in table["handbook"]["Last error"]
        assert "failed in a row" in table["handbook"]["Last error"]
    finally:
        bot.stop()
