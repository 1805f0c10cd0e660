"""Who may post to /slack/events: only requests signed with the app's signing secret, and in Socket Mode no
one (Slack's events come over the socket, the route is not served). `ai-employee serve` runs as a real
process against the local Slack Web API and a scripted Socket Mode websocket."""

from __future__ import annotations

import asyncio
import json
import re
import sqlite3
import subprocess
import sys
import threading
import tomllib
import urllib.parse
from pathlib import Path

import httpx
import pytest
from aiohttp import WSMsgType, web
from packaging.version import Version

from tests.bot.harness import sign, wait_for
from tests.bot.replicas import replica_env
from tests.conftest import PROJECT
from tests.fakes.slack_api import SlackApiServer
from tests.processes import free_port, stop_process, wait_until_up

ADMIN = "U0ADMIN01"
APP_TOKEN = "xapp-1-A0FAKEAPP-1-socket"


class SocketModeLink:
    """The websocket Slack hands out from apps.connections.open: says hello, sends envelopes, records acks."""

    def __init__(self) -> None:
        self.acks: list[dict] = []
        self.connected = threading.Event()
        self._socket: web.WebSocketResponse | None = None
        self._loop = asyncio.new_event_loop()
        self._started = threading.Event()
        threading.Thread(target=self._serve, daemon=True).start()
        self._started.wait(10)

    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/link"

    def _serve(self) -> None:
        asyncio.set_event_loop(self._loop)

        async def link(request: web.Request) -> web.WebSocketResponse:
            socket = web.WebSocketResponse()
            await socket.prepare(request)
            await socket.send_json({"type": "hello", "num_connections": 1, "connection_info": {"app_id": "A0FAKEAPP"}})
            self._socket = socket
            self.connected.set()
            async for message in socket:
                if message.type == WSMsgType.TEXT:
                    self.acks.append(json.loads(message.data))
            return socket

        async def start() -> None:
            app = web.Application()
            app.router.add_get("/link", link)
            self._runner = web.AppRunner(app)
            await self._runner.setup()
            site = web.TCPSite(self._runner, "127.0.0.1", 0)
            await site.start()
            self.port = site._server.sockets[0].getsockname()[1]

        self._loop.run_until_complete(start())
        self._started.set()
        self._loop.run_forever()

    def send(self, envelope: dict) -> None:
        assert self._socket is not None
        asyncio.run_coroutine_threadsafe(self._socket.send_json(envelope), self._loop).result(10)

    def close(self) -> None:
        asyncio.run_coroutine_threadsafe(self._runner.cleanup(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)


def scope_command(user: str = ADMIN, text: str = "hr,secret") -> dict[str, str]:
    return {"command": "/scope", "text": text, "user_id": user, "user_name": "boss", "channel_id": "C0GENERAL",
            "team_id": "T0FAKE001", "trigger_id": "1337.42.abc", "response_url": "https://hooks.slack.invalid/x",
            "token": "legacy", "api_app_id": "A0FAKEAPP"}


def overrides(data_dir: Path) -> list[tuple]:
    path = data_dir / "scopes.sqlite3"
    if not path.exists():
        return []
    with sqlite3.connect(path) as db:
        tables = [row[0] for row in db.execute("select name from sqlite_master where type='table'")]
        return [row for table in tables for row in db.execute(f"select * from {table}")]  # noqa: S608 - our tables


@pytest.fixture
def socket_mode_bot(tmp_path):
    """`ai-employee serve --socket-mode` with an app token and no signing secret, as Socket Mode is set up."""
    link = SocketModeLink()
    slack = SlackApiServer(token_prefixes=("xoxb-", "xapp-"), users={ADMIN: {}}).start()
    slack.set_response("apps.connections.open", {"url": link.url})
    data_dir = tmp_path / "data"
    env = replica_env(data_dir, slack.base_url, None)
    del env["SLACK_SIGNING_SECRET"]
    env["SLACK_APP_TOKEN"] = APP_TOKEN
    port = free_port()
    log = tmp_path / "serve.log"
    with open(log, "w") as out:
        process = subprocess.Popen([sys.executable, "-m", "ai_employee.cli", "serve", "--socket-mode", "--host",
                                    "127.0.0.1", "--port", str(port)], env=env, cwd=tmp_path, stdout=out,
                                   stderr=subprocess.STDOUT)
    try:
        wait_until_up(f"http://127.0.0.1:{port}/health", process=process, timeout=120)
        assert link.connected.wait(30), log.read_text()
        yield f"http://127.0.0.1:{port}", link, data_dir, log
    finally:
        stop_process(process, 20)
        link.close()
        slack.stop()


def test_in_socket_mode_slack_events_are_not_served_over_http(socket_mode_bot):
    """The forgery from the issue: a `/scope hr,secret` in an admin's name, signed with the empty key that an
    unset signing secret would be. It finds no route; the same command over the socket is acknowledged."""
    url, link, data_dir, log = socket_mode_bot
    body = urllib.parse.urlencode(scope_command()).encode()
    forged = httpx.post(f"{url}/slack/events", content=body, timeout=10,
                        headers={"Content-Type": "application/x-www-form-urlencoded", **sign(body, secret="")})
    assert forged.status_code == 404
    assert overrides(data_dir) == [], "no scope was changed"
    assert httpx.get(f"{url}/health", timeout=10).status_code == 200, "the host's endpoints stay on HTTP"

    link.send({"envelope_id": "env-1", "type": "slash_commands", "accepts_response_payload": True,
               "payload": scope_command(text="")})
    wait_for(lambda: link.acks, timeout=30)
    assert [ack["envelope_id"] for ack in link.acks] == ["env-1"], log.read_text()[-3000:]
    assert "Traceback" not in log.read_text()


def test_over_http_a_request_signed_with_another_or_an_empty_key_is_refused(bot):
    body = urllib.parse.urlencode(scope_command()).encode()
    for secret in ("", "not-the-signing-secret"):
        forged = bot.post(body, "application/x-www-form-urlencoded", headers=sign(body, secret=secret))
        assert forged.status_code == 401
    stale = bot.post(body, "application/x-www-form-urlencoded", headers=sign(body, timestamp=1_700_000_000))
    assert stale.status_code == 401, "a replayed request (timestamp older than five minutes) is refused"
    assert bot.post(body, "application/x-www-form-urlencoded").status_code == 200, "signed with the secret"


def test_serve_over_http_refuses_to_start_without_a_signing_secret(tmp_path):
    env = replica_env(tmp_path / "data", "http://127.0.0.1:9/api/", None)
    for secret in (None, "", "   "):
        if secret is None:
            env.pop("SLACK_SIGNING_SECRET", None)
        else:
            env["SLACK_SIGNING_SECRET"] = secret
        done = subprocess.run([sys.executable, "-m", "ai_employee.cli", "serve", "--port", str(free_port())],
                              env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120)
        assert done.returncode == 1 and "SLACK_SIGNING_SECRET" in done.stderr, done.stderr
        assert "Traceback" not in done.stderr


def test_the_required_slack_sdk_refuses_an_empty_signing_secret():
    """slack-sdk 3.43 (python-slack-sdk #1884) is the first whose SignatureVerifier refuses an empty secret;
    Bolt 1.29 (bolt-python #1541) builds the verifier only when a request is checked, so Socket Mode starts
    without one."""
    from slack_sdk.signature import SignatureVerifier

    declared = tomllib.loads((PROJECT / "pyproject.toml").read_text())["project"]["dependencies"]
    minimum = {re.split(r"[><=]", d)[0]: Version(re.search(r">=([\d.]+)", d)[1]) for d in declared if ">=" in d}
    assert minimum["slack-sdk"] >= Version("3.43") and minimum["slack-bolt"] >= Version("1.29")
    for empty in ("", "  "):
        with pytest.raises(ValueError, match="must not be empty"):
            SignatureVerifier(empty)
