"""No token, secret, API key or password shows in a setting's repr, its JSON, or what `serve` logs."""

from __future__ import annotations

import json
import time

import httpx
import pytest

from bot.slack.config import SlackSettings
from bot.teams.config import TeamsSettings
from rag.config import Settings
from tests.bot.harness import sign, wait_for
from tests.cli.serving import TEAMS, Served, serve_env
from tests.fakes.entra import EntraTokenService
from tests.fakes.slack_api import SlackApiServer
from tests.processes import free_port

REDIS_PASSWORD = "redis-pa55word-0001"
GATEWAY_PASSWORD = "gateway-pa55word-0001"  # in the model servers' and MinerU's URLs (a proxy with basic auth)
SECRETS = {
    "SLACK_BOT_TOKEN": "xoxb-secret-bot-token-0001",
    "SLACK_SIGNING_SECRET": "signing-secret-0001",
    "SLACK_APP_TOKEN": "xapp-secret-app-token-0001",
    f"{TEAMS}CLIENTSECRET": "teams-client-secret-0001",
    "AIE_EMBED_API_KEY": "embed-api-key-0001",
    "AIE_REWRITE_API_KEY": "rewrite-api-key-0001",
    "AIE_RERANK_API_KEY": "rerank-api-key-0001",
    "AIE_ANSWER_API_KEY": "answer-api-key-0001",
    "AIE_MINERU_API_KEY": "mineru-api-key-0001",
    "MILVUS_TOKEN": "root:milvus-token-0001",
}


def secret_values() -> list[str]:
    return [*SECRETS.values(), REDIS_PASSWORD, GATEWAY_PASSWORD]


@pytest.fixture
def slack():
    with SlackApiServer(tokens=[SECRETS["SLACK_BOT_TOKEN"]]) as server:
        yield server


CLIENT_ID, TENANT = "00000000-0000-4000-8000-00000000c1d0", "tenant"


@pytest.fixture
def entra():
    with EntraTokenService({TENANT}, {CLIENT_ID: SECRETS[f"{TEAMS}CLIENTSECRET"]}) as service:
        yield service


@pytest.fixture
def configured(monkeypatch, tmp_path, slack, entra):
    """Every secret setting set, a model server for each role (none of them running), Redis with a password;
    Slack and Entra accept the bot's credentials."""
    closed = f"http://gateway:{GATEWAY_PASSWORD}@127.0.0.1:{free_port()}/v1"
    env = {**SECRETS, "REDIS_URL": f"redis://:{REDIS_PASSWORD}@127.0.0.1:{free_port()}/0",
           "SLACK_API_URL": slack.base_url, **entra.env(),
           f"{TEAMS}CLIENTID": CLIENT_ID, f"{TEAMS}TENANTID": TENANT,
           **{f"AIE_{role}_BASE_URL": closed for role in ("EMBED", "REWRITE", "RERANK", "ANSWER")},
           **{f"AIE_{role}_MODEL": "some-model" for role in ("EMBED", "REWRITE", "RERANK", "ANSWER")},
           "AIE_MINERU_SERVER_URL": closed}
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    monkeypatch.chdir(tmp_path)  # no developer's .env
    return env


def test_settings_show_no_secret_in_repr_str_or_json(configured):
    for settings in (Settings(), SlackSettings(), TeamsSettings()):
        shown = repr(settings) + str(settings) + settings.model_dump_json() + str(settings.model_dump())
        for value in secret_values():
            assert value not in shown, f"{type(settings).__name__} shows {value}"
    assert Settings().redis_url.get_secret_value() == configured["REDIS_URL"], "the value is still there for use"
    assert TeamsSettings().connection()["CLIENTSECRET"] == SECRETS[f"{TEAMS}CLIENTSECRET"]


def test_a_blank_secret_is_no_secret(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("REDIS_URL", "")
    monkeypatch.setenv("AIE_ANSWER_API_KEY", " ")
    settings = Settings()
    assert settings.redis_url is None and settings.answer_api_key is None


def test_serve_logs_no_secret_even_when_redis_is_down(configured, slack, tmp_path):
    env = serve_env(tmp_path / "data", **configured, AIE_LOG_LEVEL="DEBUG")
    with Served(env, tmp_path, "--host", "127.0.0.1") as served:
        ready = served.get("/ready")
        assert ready.status_code == 503 and ready.json()["redis"] == {"configured": True, "reachable": False}
        assert ready.json()["credentials"] == {"slack": "ok", "teams": "ok"}  # checked with the secrets themselves
        assert httpx.post(f"{served.url}/slack/events", content=b"{}", timeout=10).status_code == 401
        assert httpx.post(f"{served.url}/api/messages", content=b"{}", timeout=10).status_code == 401
        event = json.dumps({"type": "event_callback", "event_id": "Ev0SECRET1", "team_id": "T0FAKE001",
                            "event": {"type": "app_mention", "user": "U0PLAIN01", "text": "<@U0FAKEBOT> hi",
                                      "channel": "C0GENERAL", "ts": f"{time.time():.6f}"}}).encode()
        signed = sign(event, secret=SECRETS["SLACK_SIGNING_SECRET"])
        delivered = httpx.post(f"{served.url}/slack/events", content=event, timeout=10,
                               headers={"Content-Type": "application/json", **signed})
        assert delivered.status_code == 200
        wait_for(lambda: slack.calls_to("chat.postMessage"), timeout=60)  # "no index yet", de-duplicated without Redis
    log = served.text
    redis_down = [r["message"] for r in served.records() if "Redis at" in r["message"]]
    assert redis_down and all("redis://***@127.0.0.1:" in m for m in redis_down), redis_down
    for value in secret_values():
        assert value not in log, f"the log shows {value}"
