"""A knowledge base with collections and access lists, a scopes file for it, and asking the bot from a given
place as a given person — shared by the Slack, Teams and command-line scope tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from rag.knowledge_base import KnowledgeBase
from rag.config import Settings
from tests.bot.harness import BOT_USER, TEAM, RunningBot, start_bot, wait_for
from tests.conftest import build
from tests.fakes.slack_api import SlackApiServer

BOSS, LEAD, PLAIN, ADMIN = "U0BOSS01", "U0LEAD01", "U0PLAIN01", "U0ADMIN01"
LEADS = "S0HRLEADS"
TEAMS_BOSS = "aad0000c-0000-4000-8000-00000000b055"
TEAMS_LEADS = "6b0e3c1a-0000-4000-8000-000000001ead"  # an Entra group (resolved through Microsoft Graph)
HR, ENG, GENERAL = "C0HR", "C0ENG", "C0GENERAL"
SALARY = "92,000"
LEAVE_DAYS = "26 working days"

DOCUMENTS = {
    "hr/leave.md": """# Leave policy

## Annual leave

Every employee has 26 working days of annual leave per calendar year.

## Sick leave

Sick leave needs a doctor's note from the third day of absence on.
""",
    "hr/salaries.md": f"""---
title: Salary bands
access: [{BOSS}, {LEADS}, {TEAMS_BOSS}, {TEAMS_LEADS}]
---
# Salary bands

## Engineering

Senior engineers earn between 92,000 and 118,000 EUR a year in salary band E4.
""",
    "eng/deploy.md": """# Deployments

## Release train

Production deployments leave every Tuesday and Thursday at 10:00 with the release train.

## Holidays and the release train

Engineers plan their holidays so that someone from the team rides every release train.
""",
    "welcome.md": """# Welcome

## Office

The office opens at 8:00; leave your coat in the cloakroom on the ground floor.
""",
}
SCOPES = """default: [public]
dm: [hr, public]
slack: {C0HR: [hr, public], C0ENG: [eng, public]}
teams: {"19:eng@thread.tacv2": [eng, public], "19:hr@thread.tacv2": [hr, public]}
"""


def write_corpus(root: Path) -> Path:
    for rel, text in DOCUMENTS.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def scoped_index(shared_data_dir, tmp_path_factory):
    """(data dir, index dir, scopes file) of the corpus above, built once per module."""
    root = tmp_path_factory.mktemp("scoped")
    index_dir = root / "index"
    build(KnowledgeBase(Settings(data_dir=shared_data_dir, _env_file=None), index_dir), [write_corpus(root / "docs")])
    scopes = root / "scopes.yaml"
    scopes.write_text(SCOPES, encoding="utf-8")
    return shared_data_dir, index_dir, scopes


@pytest.fixture
def changing_index(shared_data_dir, tmp_path):
    """(data dir, index dir, scopes file) of the corpus above built in this test's own folder, its documents
    then changed so that a reindex adds, changes and removes files of several collections (see CHANGED)."""
    docs = write_corpus(tmp_path / "docs")
    build(KnowledgeBase(Settings(data_dir=shared_data_dir, _env_file=None), tmp_path / "index"), [docs])
    (docs / "hr/bonus.md").write_text("# Bonus\n\nThe yearly bonus is paid in March.\n", encoding="utf-8")
    (docs / "eng/oncall.md").write_text("# On call\n\nThe on-call engineer answers pages within 15 minutes.\n",
                                        encoding="utf-8")
    salaries = docs / "hr/salaries.md"
    salaries.write_text(salaries.read_text(encoding="utf-8").replace("118,000", "119,000"), encoding="utf-8")
    (docs / "eng/deploy.md").unlink()
    scopes = tmp_path / "scopes.yaml"
    scopes.write_text(SCOPES, encoding="utf-8")
    return shared_data_dir, tmp_path / "index", scopes


# What the reindex after `changing_index` finds.
CHANGED = {"added": ["eng/oncall.md", "hr/bonus.md"], "changed": ["hr/salaries.md"], "removed": ["eng/deploy.md"]}


def start_scoped_bot(scoped_index, tmp_path: Path, slack_url: str | None, **options) -> RunningBot:
    data_dir, index_dir, scopes = scoped_index
    chat = {"AIE_SCOPES_FILE": str(scopes), "AIE_SCOPES_DB": str(tmp_path / "scopes.sqlite3")}
    return start_bot(data_dir, index_dir, slack_url, chat_settings=chat, feedback_db=tmp_path / "feedback.sqlite3",
                     **options)


def finished(slack: SlackApiServer, channel: str, after: int) -> list:
    return [c for c in slack.calls_to("chat.update")[after:] if c.args.get("channel") == channel
            and any(b.get("type") == "context_actions" for b in c.args.get("blocks") or [])]


def ask_in(bot: RunningBot, slack: SlackApiServer, channel: str, user: str, question: str) -> tuple[dict, str]:
    """Ask in a channel (with a mention) or a direct message (D…); the finished answer message and its id."""
    before = len(slack.calls_to("chat.update"))
    if channel.startswith("D"):
        ts = slack.seed_message(channel, question, user=user)
        bot.event({"type": "message", "channel_type": "im", "channel": channel, "user": user, "text": question,
                   "ts": ts, "event_ts": ts, "team": TEAM})
    else:
        text = f"<@{BOT_USER}> {question}"
        ts = slack.seed_message(channel, text, user=user)
        bot.event({"type": "app_mention", "user": user, "text": text, "ts": ts, "channel": channel,
                   "event_ts": ts, "team": TEAM})
    final = wait_for(lambda: finished(slack, channel, before))[0].args
    feedback = next(b for b in final["blocks"] if b["type"] == "context_actions")["elements"][0]
    return final, feedback["negative_button"]["value"].split(":", 1)[1]


def shown(message: dict) -> str:
    """Everything the reader sees of a finished answer: its text and its footnotes."""
    parts = [b["text"] if b["type"] == "markdown" else b["text"]["text"] for b in message["blocks"]
             if b["type"] in ("markdown", "section")]
    return " ".join(parts).replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
