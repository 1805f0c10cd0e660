"""What `serve` tells its log as it works: a line for each question (platform, place, outcome, latency; not
the question's words), each source synced (what it took in, removed and kept, how long) and each deletion
held back. A real `serve` process with a watched folder source, against the local Slack Web API."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import httpx

from tests.bot.harness import SIGNING_SECRET, sign, wait_for
from tests.cli.serving import Served, serve_env
from tests.fakes.slack_api import SlackApiServer

TOKEN = "xoxb-serve-log-test"
QUESTION = "How much is a hotel night in London?"
DOCS = {
    "hotels.md": "# Hotels\n\nHotels are reimbursed up to 150 EUR per night, or 220 EUR in London.\n",
    "meals.md": "# Meals\n\nThe daily meal allowance on business trips is 45 EUR for a full travel day.\n",
    "visa.md": "# Visas\n\nVisa fees for business travel are paid by the company through the travel desk.\n",
}


def messages(served: Served, pattern: str) -> list[dict]:
    return [r for r in served.records() if re.search(pattern, r["message"])]


def mention(served: Served, text: str) -> None:
    event = {"type": "event_callback", "event_id": "Ev0LOG0001", "team_id": "T0FAKE001",
             "event": {"type": "app_mention", "user": "U0ASKER01", "text": f"<@U0FAKEBOT> {text}",
                       "channel": "C0GENERAL", "ts": f"{time.time():.6f}"}}
    body = json.dumps(event).encode()
    sent = httpx.post(f"{served.url}/slack/events", content=body, timeout=10,
                      headers={"Content-Type": "application/json", **sign(body, secret=SIGNING_SECRET)})
    assert sent.status_code == 200


def watched_folder(tmp_path: Path) -> tuple[Path, Path]:
    """The documents' folder, and a sources file declaring it as a watched folder source."""
    docs = tmp_path / "docs"
    docs.mkdir()
    for name, text in DOCS.items():
        (docs / name).write_text(text, encoding="utf-8")
    sources = tmp_path / "sources.yaml"
    sources.write_text(f"sources:\n  - {{name: handbook, type: folder, path: {docs}, watch: true}}\n")
    return docs, sources


def slack_env(tmp_path: Path, slack: SlackApiServer, sources: Path, **variables: str) -> dict[str, str]:
    return serve_env(tmp_path / "data", SLACK_BOT_TOKEN=TOKEN, SLACK_SIGNING_SECRET=SIGNING_SECRET,
                     SLACK_API_URL=slack.base_url, AIE_SOURCES_FILE=str(sources), **variables)


def test_serve_logs_each_question_sync_and_held_back_deletion(tmp_path):
    docs, sources = watched_folder(tmp_path)
    with SlackApiServer(tokens=[TOKEN]) as slack:
        with Served(slack_env(tmp_path, slack, sources), tmp_path, "--host", "127.0.0.1") as served:
            synced = wait_for(lambda: messages(served, "^sync of handbook"), timeout=300)
            mention(served, QUESTION)
            asked = wait_for(lambda: messages(served, "^question on "), timeout=120)
            (docs / "meals.md").unlink()
            (docs / "visa.md").unlink()
            held = wait_for(lambda: messages(served, "held back"), timeout=120)
            log = served.text
    assert re.fullmatch(r"sync of handbook: fetched 3, removed 0, kept 0 in \d+\.\d s", synced[0]["message"])
    assert synced[0]["level"] == "info"
    assert len(asked) == 1 and re.fullmatch(r"question on slack in C0GENERAL: answered in \d+ ms",
                                            asked[0]["message"]), asked
    assert asked[0]["event_id"] == "Ev0LOG0001" and asked[0]["level"] == "info"
    assert "hotel night" not in log  # the question's words only at DEBUG
    assert len(held) == 1 and held[0]["level"] == "warning"
    assert held[0]["message"].startswith("sync of handbook held back: the sync of handbook would remove 2 of its 3 "
                                         "documents; nothing was changed")


def test_at_debug_the_question_line_carries_its_words(tmp_path):
    _, sources = watched_folder(tmp_path)
    with SlackApiServer(tokens=[TOKEN]) as slack:
        with Served(slack_env(tmp_path, slack, sources, AIE_LOG_LEVEL="DEBUG"), tmp_path, "--host",
                    "127.0.0.1") as served:
            wait_for(lambda: messages(served, "^sync of handbook"), timeout=300)
            mention(served, QUESTION)
            asked = wait_for(lambda: messages(served, "^question on "), timeout=120)
    words = re.escape(QUESTION)
    assert re.fullmatch(rf"question on slack in C0GENERAL: answered in \d+ ms — '{words}'", asked[0]["message"])
