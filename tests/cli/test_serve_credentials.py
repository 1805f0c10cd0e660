"""`serve` asks each platform whether it takes the bot's credentials before it serves — Slack's auth.test, a
token from Entra for Teams — so a wrong token is one line and exit code 2 rather than a healthy-looking bot
that cannot answer; a surface refused beside a working one is left out, and /ready says why."""

from __future__ import annotations

import json
import time

import httpx
import pytest

from tests.bot.harness import sign, wait_for
from tests.cli.serving import TEAMS, Served, refused, serve_env
from tests.cli.test_cli_errors import run
from tests.fakes.entra import EntraTokenService
from tests.fakes.slack_api import SlackApiServer

GOOD_TOKEN, WRONG_TOKEN = "xoxb-good-bot-token-0019", "xoxb-revoked-bot-token-0019"
SIGNING = "signing-secret-0019"
APP_TOKEN = "xapp-app-token-0019"
TENANT, CLIENT = "7c3e6d2a-0000-4000-8000-000000000019", "00000000-0000-4000-8000-00000000c1d0"
GOOD_SECRET, WRONG_SECRET = "teams-client-secret-good-0019", "teams-client-secret-wrong-0019"
SECRETS = (GOOD_TOKEN, WRONG_TOKEN, SIGNING, APP_TOKEN, GOOD_SECRET, WRONG_SECRET)
SLACK_REFUSED = "Slack: invalid credentials (invalid_auth), check SLACK_BOT_TOKEN (the xoxb-… Bot User OAuth Token)"
TEAMS_REFUSED = "invalid credentials (invalid_client: AADSTS7000215)"


@pytest.fixture(scope="module")
def indexed(tmp_path_factory):
    """A data dir with one small document indexed: the bot can answer, so only credentials keep it unready."""
    root = tmp_path_factory.mktemp("serve-credentials")
    (root / "docs").mkdir()
    (root / "docs" / "leave.md").write_text("# Leave\n\nEmployees get twenty six days of annual leave.\n")
    done = run(root / "data", "index", str(root / "docs"))
    assert done.returncode == 0, done.stderr
    return root / "data"


@pytest.fixture
def slack():
    with SlackApiServer(tokens=[GOOD_TOKEN]) as server:
        yield server


@pytest.fixture
def entra():
    with EntraTokenService({TENANT}, {CLIENT: GOOD_SECRET}) as service:
        yield service


def slack_env(slack: SlackApiServer, token: str) -> dict[str, str]:
    return {"SLACK_BOT_TOKEN": token, "SLACK_SIGNING_SECRET": SIGNING, "SLACK_API_URL": slack.base_url}


def teams_env(entra: EntraTokenService, secret: str) -> dict[str, str]:
    return {**entra.env(), f"{TEAMS}CLIENTID": CLIENT, f"{TEAMS}CLIENTSECRET": secret, f"{TEAMS}TENANTID": TENANT}


def assert_no_secret(*texts: str) -> None:
    for secret in SECRETS:
        assert not [text for text in texts if secret in text], f"{secret} is shown"


@pytest.mark.parametrize("args", [(), ("--socket-mode",)])
def test_a_refused_slack_token_stops_serve_with_one_line_and_exit_code_2(slack, tmp_path, args):
    env = serve_env(tmp_path / "data", **slack_env(slack, WRONG_TOKEN), SLACK_APP_TOKEN=APP_TOKEN)
    started = time.monotonic()
    done = refused(env, tmp_path, *args)
    assert (done.returncode, done.stderr, done.stdout) == (2, f"error: cannot start: {SLACK_REFUSED}\n", "")
    assert [call.token for call in slack.calls_to("auth.test")] == [WRONG_TOKEN]
    assert time.monotonic() - started < 30
    assert_no_secret(done.stderr)


def test_when_every_surface_is_refused_the_one_line_names_each(slack, entra, tmp_path):
    env = serve_env(tmp_path / "data", **slack_env(slack, WRONG_TOKEN), **teams_env(entra, WRONG_SECRET))
    done = refused(env, tmp_path)
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert done.stderr.startswith(f"error: cannot start: {SLACK_REFUSED}; Teams: {TEAMS_REFUSED}, check {TEAMS}"), \
        done.stderr
    assert_no_secret(done.stderr)


def test_a_refused_teams_registration_beside_a_good_slack_token_serves_slack_only(indexed, slack, entra, tmp_path):
    env = serve_env(indexed, **slack_env(slack, GOOD_TOKEN), **teams_env(entra, WRONG_SECRET))
    with Served(env, tmp_path, "--host", "127.0.0.1") as served:
        ready = wait_for(lambda: (r := served.get("/ready")).json()["index"]["loaded"] and r, 60)
        assert ready.status_code == 503 and ready.json()["ready"] is False
        assert ready.json()["credentials"] == {"slack": "ok", "teams": TEAMS_REFUSED}
        assert httpx.post(f"{served.url}/api/messages", content=b"{}", timeout=10).status_code == 404
        event = json.dumps({"type": "event_callback", "event_id": "Ev0CRED001", "team_id": "T0FAKE001",
                            "event": {"type": "app_mention", "user": "U0PLAIN01", "text": "<@U0FAKEBOT> annual leave?",
                                      "team": "T0FAKE001", "channel": "C0GENERAL", "ts": f"{time.time():.6f}"}}).encode()
        delivered = httpx.post(f"{served.url}/slack/events", content=event, timeout=10,
                               headers={"Content-Type": "application/json", **sign(event, secret=SIGNING)})
        assert delivered.status_code == 200
        answered = wait_for(lambda: [c for c in slack.calls_to("chat.stopStream") + slack.calls_to("chat.postMessage")
                                     if c.ok], 60)
        assert answered[0].args["channel"] == "C0GENERAL"
        records = served.records()
    warnings = [r["message"] for r in records if r["level"] in ("warning", "error")]
    assert len(warnings) == 1 and warnings[0].startswith(f"Teams is not served: {TEAMS_REFUSED}; check {TEAMS}CLIENTID"), \
        warnings
    assert "Serving Slack only; /ready answers 503" in warnings[0]
    assert [r.secret_matched for r in entra.token_requests] == [False]
    assert_no_secret(served.text, ready.text)


def test_accepted_credentials_make_ready_200_with_each_surface_ok(indexed, slack, entra, tmp_path):
    env = serve_env(indexed, **slack_env(slack, GOOD_TOKEN), **teams_env(entra, GOOD_SECRET))
    with Served(env, tmp_path, "--host", "127.0.0.1") as served:
        ready = wait_for(lambda: (r := served.get("/ready")).status_code == 200 and r, 60)
        records = served.records()
    assert ready.json()["ready"] is True and ready.json()["credentials"] == {"slack": "ok", "teams": "ok"}
    assert [r.token for r in slack.calls_to("auth.test")] == [GOOD_TOKEN]
    assert [(r.client_id, r.scope, r.secret_matched) for r in entra.token_requests] == [
        (CLIENT, "https://api.botframework.com/.default", True)]
    assert not [r for r in records if r["level"] in ("warning", "error")], records
    assert "Slack accepted the bot token: @ai-employee in workspace Fake Workspace" in [r["message"] for r in records]
    assert_no_secret(served.text, ready.text)


def test_a_platform_that_cannot_answer_yet_is_served_unverified_until_it_does(indexed, slack, tmp_path):
    slack.fail_next("auth.test", status=503)
    env = serve_env(indexed, **slack_env(slack, GOOD_TOKEN))
    with Served(env, tmp_path, "--host", "127.0.0.1") as served:
        first = served.get("/ready")
        assert first.status_code == 503
        assert first.json()["credentials"] == {"slack": "unverified (auth.test answered service_unavailable)"}
        ready = wait_for(lambda: (r := served.get("/ready")).status_code == 200 and r, 40, interval=1)
        records = served.records()
    assert ready.json()["credentials"] == {"slack": "ok"}
    warnings = [r["message"] for r in records if r["level"] in ("warning", "error")]
    assert warnings == ["could not verify the Slack credentials: unverified (auth.test answered service_unavailable); "
                        "serving Slack anyway, /ready answers 503 until Slack accepts them (checked again every 10 s)"]
    assert "Slack credentials verified" in [r["message"] for r in records]
