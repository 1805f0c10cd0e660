"""Knowledge scopes on the command line, as real processes: `ask --channel` answers as the bot would in that
place for that person (the same scopes file, stored overrides and Slack user groups), `search` and `eval`
keep to `--scope`, and a wrong scopes file is one line, not a traceback."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from bot.core.scopes import ScopeOverrides
from tests.bot.scoped import BOSS, LEAD, LEADS, LEAVE_DAYS, PLAIN, SALARY, SCOPES, TEAMS_BOSS, write_corpus
from tests.conftest import cli_env
from tests.fakes.slack_api import SlackApiServer

LEAVE = "How many days of annual leave do I get?"
PAY = "How much do senior engineers earn?"


@pytest.fixture(scope="module")
def place(tmp_path_factory):
    """A data dir with the scoped corpus indexed, and the environment that names its scopes file."""
    root = tmp_path_factory.mktemp("cli-scopes")
    (root / "scopes.yaml").write_text(SCOPES, encoding="utf-8")
    env = {k: v for k, v in cli_env(root / "data").items() if not k.startswith("SLACK_")}
    env["AIE_SCOPES_FILE"] = str(root / "scopes.yaml")
    run(env, "index", str(write_corpus(root / "docs")), "--json")
    return root, env


def run(env: dict[str, str], *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    result = subprocess.run([sys.executable, "-m", "ai_employee.cli", *args], env=env, capture_output=True,
                            text=True, timeout=600)
    if check and result.returncode != 0:
        raise AssertionError(f"exit {result.returncode}\nstdout: {result.stdout}\nstderr: {result.stderr}")
    return result


def ask(env: dict[str, str], question: str, *options: str) -> dict:
    return json.loads(run(env, "ask", question, "--json", *options).stdout)


def cited(answer: dict) -> set[str]:
    return {c["chunk"]["file"] for c in answer["citations"]}


def test_ask_in_a_channel_answers_from_its_collections_as_the_bot_does(place):
    root, env = place
    hr = ask(env, LEAVE, "--channel", "C0HR")
    assert LEAVE_DAYS in hr["text"] and "hr/leave.md" in cited(hr)
    assert hr["scope"] == {"collections": ["hr", "public"], "readers": []}
    ScopeOverrides(root / "data" / "scopes.sqlite3").set("slack", "C0HR", frozenset({"eng"}), "U0ADMIN01")  # /scope
    moved = ask(env, LEAVE, "--channel", "C0HR")
    assert LEAVE_DAYS not in moved["text"] and moved["scope"]["collections"] == ["eng"]


def test_ask_in_a_teams_reply_chain_answers_with_its_channels_scope(place):
    _, env = place
    chain = ask(env, LEAVE, "--channel", "19:hr@thread.tacv2;messageid=1700000000000", "--platform", "teams")
    assert chain["scope"] == {"collections": ["hr", "public"], "readers": []}
    assert LEAVE_DAYS in chain["text"] and "hr/leave.md" in cited(chain)


def test_ask_in_a_direct_message_quotes_access_listed_documents_to_their_readers(place):
    _, env = place
    assert SALARY in ask(env, PAY, "--channel", "D0BOSS01", "--user", BOSS)["text"]
    assert SALARY not in ask(env, PAY, "--channel", "D0PLAIN1", "--user", PLAIN)["text"]
    assert SALARY in ask(env, PAY, "--channel", "a:boss-chat", "--user", TEAMS_BOSS, "--platform", "teams")["text"]
    with SlackApiServer() as slack:  # with Slack's credentials, the bot's user groups count too
        slack.add_usergroup(LEADS, [LEAD])
        alone = ask(env, PAY, "--channel", "D0LEAD01", "--user", LEAD)
        grouped = ask({**env, "SLACK_BOT_TOKEN": "xoxb-test", "SLACK_API_URL": slack.base_url}, PAY,
                      "--channel", "D0LEAD01", "--user", LEAD)
        assert [c.args for c in slack.calls_to("usergroups.list")] == [{"include_users": True}]
        slack.assert_no_rejections()
    assert SALARY not in alone["text"] and alone["scope"]["readers"] == [LEAD.lower()]
    assert SALARY in grouped["text"] and grouped["scope"]["readers"] == sorted([LEAD.lower(), LEADS.lower()])


def test_search_and_eval_keep_to_the_scope(place):
    root, env = place
    hits = json.loads(run(env, "search", LEAVE, "--scope", "eng,public", "--json").stdout)
    assert hits["hits"] and {h["chunk"]["collection"] for h in hits["hits"]} <= {"eng", "public"}
    assert hits["scope"] == {"collections": ["eng", "public"], "readers": None}
    dataset = root / "dataset"
    write_corpus(dataset / "docs")
    (dataset / "questions.jsonl").write_text(json.dumps({"id": "1", "question": LEAVE, "gold": [
        {"file": "hr/leave.md", "text": "Every employee has 26 working days of annual leave"}]}) + "\n", encoding="utf-8")
    everywhere = json.loads(run(env, "eval", str(dataset), "--json").stdout)
    scoped = json.loads(run(env, "eval", str(dataset), "--scope", "eng", "--json").stdout)
    assert everywhere["recall@10"] == 1.0 and scoped["recall@10"] == 0.0 and scoped["scope"]["collections"] == ["eng"]


def test_a_wrong_scopes_file_is_one_clear_line(place, tmp_path):
    _, env = place
    bad = tmp_path / "scopes.yaml"
    bad.write_text("slack: {C0HR: hr}\n", encoding="utf-8")
    env = {**env, "AIE_SCOPES_FILE": str(bad)}
    expected = f"error: {bad}: slack.C0HR: expected a list of collection names such as [hr, public], got the text 'hr'"
    asked = run(env, "ask", LEAVE, "--channel", "C0HR", check=False)
    served = run({**env, "SLACK_BOT_TOKEN": "xoxb-test", "SLACK_SIGNING_SECRET": "secret"}, "serve", check=False)
    for result in (asked, served):
        # One message (the console wraps it at its width), no traceback.
        assert result.returncode == 1 and " ".join(result.stderr.split()) == expected, result.stderr
    wrong = run(env, "ask", LEAVE, "--user", BOSS, check=False)
    assert wrong.returncode == 1 and "--user goes with --channel" in wrong.stderr


@pytest.fixture(autouse=True)
def _no_slack_credentials(monkeypatch):
    for name in [n for n in os.environ if n.startswith("SLACK_")]:
        monkeypatch.delenv(name)


def test_ask_looks_up_entra_groups_as_the_bot_does_and_fails_closed_when_it_cannot(place):
    """With AIE_TEAMS_GROUPS on, `ask` asks Microsoft Graph with the bot's own app as the bot would; here Entra
    cannot be reached, so the member of the listed group is refused the document — in one log line, no trace."""
    _, env = place
    secret = "s3cret-client-value"
    connection = "CONNECTIONS__SERVICE_CONNECTION__SETTINGS__"
    teams = {"AIE_TEAMS_GROUPS": "true", f"{connection}CLIENTID": "00000000-0000-4000-8000-00000000c1d0",
             f"{connection}CLIENTSECRET": secret, f"{connection}TENANTID": "tenant-unreachable"}
    done = run({**env, **teams}, "ask", PAY, "--json", "--channel", "a:lead-chat", "--user",
               "aad0000e-0000-4000-8000-00000000ead1", "--platform", "teams")
    answer = json.loads(done.stdout)
    assert SALARY not in answer["text"] and answer["scope"]["readers"] == ["aad0000e-0000-4000-8000-00000000ead1"]
    assert "could not look up Teams groups (Microsoft Graph)" in done.stderr
    assert "Traceback" not in done.stderr and secret not in done.stderr
