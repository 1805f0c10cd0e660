"""Who may post to /api/messages: the SDK's real JWT validation of Bot Framework tokens, its signing keys
served by a local JWKS endpoint in place of login.botframework.com. Only Entra's token service for the
replies is stood in for (it cannot be reached from the tests): its token is checked on every reply."""

from __future__ import annotations

import json
import logging
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa
from microsoft_agents.hosting.core.authorization import AnonymousTokenProvider, ConnectionManager, _entra_issuers

from bot.teams.config import TeamsSettings
from tests.bot.harness import wait_for
from tests.bot.teams_ui import TENANT, activity, post, start_teams_bot
from tests.fakes.bot_connector import BotConnector
from tests.processes import free_port

ISSUER = _entra_issuers.BOTFRAMEWORK_PUBLIC_ISSUER
FORGED_ISSUER = "https://issuer.forged.example/"  # routed to the same keys: only the issuer check stops it
APP_ID = "bot-app-id"
OUTGOING_TOKEN = "token-from-entra"


class EntraStandIn(AnonymousTokenProvider):
    """The token Entra would issue for the bot's replies."""

    def __init__(self, configuration) -> None:
        self._configuration = configuration

    @property
    def configuration(self):
        return self._configuration

    async def get_access_token(self, resource_url: str, scopes: list[str], force_refresh: bool = False) -> str:
        return OUTGOING_TOKEN


@pytest.fixture
def signing_keys(monkeypatch):
    """Bot Framework's signing key (served by a local JWKS endpoint) and a forger's key of the same kid."""
    real, forged = (rsa.generate_private_key(public_exponent=65537, key_size=2048) for _ in range(2))
    jwk = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(real.public_key()))
    keys = json.dumps({"keys": [{**jwk, "kid": "bf-key-1", "use": "sig", "alg": "RS256"}]}).encode()

    class Keys(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(keys)

        def log_message(self, *args) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Keys)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/keys/{time.monotonic_ns()}"
    monkeypatch.setitem(_entra_issuers.BOTFRAMEWORK_JWKS_URIS, ISSUER, url)
    monkeypatch.setitem(_entra_issuers.BOTFRAMEWORK_JWKS_URIS, FORGED_ISSUER, url)
    yield real, forged
    server.shutdown()


def token(key, connector: BotConnector, audience: str = APP_ID, issuer: str = ISSUER, kid: str | None = "bf-key-1",
          expires_in: int = 600) -> str:
    now = int(time.time())
    claims = {"iss": issuer, "aud": audience, "iat": now, "nbf": now - 60, "exp": now + expires_in,
              "serviceurl": connector.service_url}
    return jwt.encode(claims, key, algorithm="RS256", headers={"kid": kid} if kid else None)


def registered_bot(handbook_index, tmp_path):
    """The bot with its Entra registration, as `serve` configures the SDK from the settings."""
    settings = TeamsSettings(_env_file=None, client_id=APP_ID, client_secret="s", tenant_id=TENANT)
    connections = ConnectionManager(EntraStandIn, CONNECTIONS={"SERVICE_CONNECTION": {"SETTINGS": settings.connection()}})
    return start_teams_bot(handbook_index, tmp_path, anonymous=False, connections=connections)


def test_only_requests_signed_by_bot_framework_for_this_bot_are_served(handbook_index, tmp_path, connector,
                                                                         signing_keys):
    real, forged = signing_keys
    bot = registered_bot(handbook_index, tmp_path)
    try:
        question = activity(connector, "How long must a password be?")
        missing = post(bot, question)
        assert missing.status_code == 401 and "Traceback" not in missing.text
        assert post(bot, question, {"Authorization": f"Bearer {token(forged, connector)}"}).status_code == 401
        assert post(bot, question, {"Authorization": "Bearer not-a-jwt"}).status_code == 401
        other_bot = token(real, connector, audience="another-bot")
        assert post(bot, question, {"Authorization": f"Bearer {other_bot}"}).status_code == 401
        assert connector.calls == [], "nothing was answered"

        accepted = post(bot, question, {"Authorization": f"Bearer {token(real, connector)}"})
        assert accepted.status_code == 202
        final = wait_for(lambda: connector.final_messages("a:personal-chat-1"))[0]
        assert "14 characters" in final.text
        assert {c.authorization for c in connector.calls} == {f"Bearer {OUTGOING_TOKEN}"}, "every reply carries a token"
    finally:
        bot.stop()


def test_a_reply_the_connector_refuses_is_logged_without_the_bots_token(handbook_index, tmp_path, connector,
                                                                          signing_keys, caplog):
    """The user blocked the bot: Teams refuses its replies with 403. The SDK's error holds the request it made,
    the bot's own bearer token among its headers, and the turn's failure was logged as its repr."""
    real, _ = signing_keys
    bot = registered_bot(handbook_index, tmp_path)
    try:
        connector.fail_next("POST", 403, times=5)
        with caplog.at_level(logging.WARNING):
            accepted = post(bot, activity(connector, "scope"), {"Authorization": f"Bearer {token(real, connector)}"})
            assert accepted.status_code in (200, 202)
            wait_for(lambda: "Teams turn failed: ClientResponseError: 403" in caplog.text)
            time.sleep(0.5)  # the apology the failure sends is refused too, and logged
        assert any(c.status == 403 and c.authorization == f"Bearer {OUTGOING_TOKEN}" for c in connector.calls)
        assert OUTGOING_TOKEN not in caplog.text, "the token the connector was sent"
    finally:
        bot.stop()


class StalledKeys:
    """A keys endpoint that accepts the connection and never answers."""

    def __enter__(self) -> str:
        self._socket = socket.create_server(("127.0.0.1", 0))
        return f"http://127.0.0.1:{self._socket.getsockname()[1]}/keys"

    def __exit__(self, *exc_info) -> None:
        self._socket.close()


def test_every_unverifiable_token_is_a_quick_401_with_one_log_line(handbook_index, tmp_path, connector, signing_keys,
                                                                   monkeypatch, caplog):
    real, forged = signing_keys
    bot = registered_bot(handbook_index, tmp_path)
    question = activity(connector, "How long must a password be?")
    cases = {
        "no kid": (token(real, connector, kid=None), "no signing key (no kid)"),
        "unknown kid": (token(real, connector, kid="retired-key"), "no signing key matches"),
        "forged signature": (token(forged, connector), "signature is not valid"),
        "another bot": (token(real, connector, audience="another-bot"), "wrong audience"),
        "another issuer": (token(real, connector, issuer=FORGED_ISSUER), "wrong issuer"),
        "expired": (token(real, connector, expires_in=-3600), "expired"),
        "not a JWT": ("not-a-jwt", "not a JWT"),
        "two words": ("two words", "no bearer token"),
    }
    try:
        for case, (bearer, why) in cases.items():
            refused(bot, question, bearer, why, caplog, case)
        monkeypatch.setitem(_entra_issuers.BOTFRAMEWORK_JWKS_URIS, ISSUER, f"http://127.0.0.1:{free_port()}/closed")
        refused(bot, question, token(real, connector), "could not be fetched", caplog, "keys endpoint closed")
        with StalledKeys() as url:
            monkeypatch.setitem(_entra_issuers.BOTFRAMEWORK_JWKS_URIS, ISSUER, url)
            refused(bot, question, token(real, connector), "did not arrive within", caplog, "keys endpoint stalled",
                    within=3.0)
        assert connector.calls == [], "nothing was answered"
    finally:
        bot.stop()


def test_a_flood_of_tokens_while_the_keys_stall_leaves_the_bot_serving(handbook_index, tmp_path, connector,
                                                                        signing_keys, monkeypatch):
    """The SDK fetches keys on a thread of the pool that also runs the answers' work (and /health): sixteen
    requests at once while the keys endpoint hangs are each refused in time, and the bot still answers."""
    from concurrent.futures import ThreadPoolExecutor

    import httpx

    real, _ = signing_keys
    bot = registered_bot(handbook_index, tmp_path)
    question = activity(connector, "How long must a password be?")
    try:
        with StalledKeys() as url:
            monkeypatch.setitem(_entra_issuers.BOTFRAMEWORK_JWKS_URIS, ISSUER, url)
            flood = [token(real, connector, audience=APP_ID) for _ in range(16)]
            started = time.monotonic()
            with ThreadPoolExecutor(16) as senders:
                statuses = list(senders.map(
                    lambda bearer: post(bot, question, {"Authorization": f"Bearer {bearer}"}).status_code, flood))
            took = time.monotonic() - started
            health_started = time.monotonic()
            health = httpx.get(f"{bot.url}/health", timeout=30)
            health_took = time.monotonic() - health_started
        assert statuses == [401] * 16 and took < 4.0, (statuses, took)
        assert health.status_code == 200 and health_took < 1.0, f"/health took {health_took:.1f} s"
        assert connector.calls == [], "nothing was answered"
    finally:
        bot.stop()


def refused(bot, question: dict, bearer: str, why: str, caplog, case: str, within: float = 1.5) -> None:
    """`bearer` gets a 401 within `within` seconds, and the log one warning naming `why` and no traceback."""
    caplog.clear()
    with caplog.at_level(logging.INFO):
        started = time.monotonic()
        response = post(bot, question, {"Authorization": f"Bearer {bearer}"})
        took = time.monotonic() - started
    assert response.status_code == 401 and response.json() == {"error": "Invalid token or authentication failed."}, case
    assert took < within, f"{case}: {took:.1f} s"
    lines = [r for r in caplog.records if r.name not in ("aiohttp.access", "httpx")]  # the request itself
    assert [(r.levelname, r.name) for r in lines] == [("WARNING", "bot.teams.auth")], (case, [r.getMessage() for r in lines])
    assert why in lines[0].getMessage() and lines[0].exc_info is None, case
    assert bearer not in caplog.text, f"{case}: the token is not logged"


def test_without_a_registration_or_the_anonymous_mode_teams_is_not_served(handbook_index, tmp_path):
    from bot.teams.config import MissingTeamsCredentials, TeamsSettings

    assert not TeamsSettings(_env_file=None).configured
    with pytest.raises(MissingTeamsCredentials, match="CLIENTSECRET and .*TENANTID"):
        TeamsSettings(_env_file=None, client_id=APP_ID).require()
    TeamsSettings(_env_file=None, anonymous_allowed=True).require()


def test_serve_refuses_to_start_only_when_neither_slack_nor_teams_is_configured(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from ai_employee.cli import app

    monkeypatch.chdir(tmp_path)  # no .env here
    for name in [n for n in __import__("os").environ if n.startswith(("SLACK_", "CONNECTIONS__"))]:
        monkeypatch.delenv(name)
    neither = CliRunner().invoke(app, ["serve"])
    assert neither.exit_code == 1 and "nothing to serve" in neither.output and "Traceback" not in neither.output
    monkeypatch.setenv("CONNECTIONS__SERVICE_CONNECTION__SETTINGS__CLIENTID", APP_ID)
    half = CliRunner().invoke(app, ["serve"])
    assert half.exit_code == 1 and "CLIENTSECRET" in half.output and "TENANTID" in half.output
