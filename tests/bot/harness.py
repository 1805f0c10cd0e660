"""Run the real bot over HTTP on an ephemeral port against the local Slack Web API server, and send
it requests signed the way Slack signs them."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import http.client
import json
import threading
import time
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from aiohttp import web

from ai_employee.wiring import make_bot
from rag.knowledge_base import KnowledgeBase
from bot.core.config import ChatSettings
from bot.slack.config import SlackSettings
from rag.config import Settings

SIGNING_SECRET = "8f742231b10e8888abcd99yyyzzz85a5"
BOT_USER = "U0FAKEBOT"
TEAM = "T0FAKE001"


def sign(body: bytes, timestamp: int | None = None, secret: str = SIGNING_SECRET) -> dict[str, str]:
    timestamp = int(time.time()) if timestamp is None else timestamp
    base = f"v0:{timestamp}:".encode() + body
    signature = "v0=" + hmac.new(secret.encode(), base, hashlib.sha256).hexdigest()
    return {"X-Slack-Request-Timestamp": str(timestamp), "X-Slack-Signature": signature}


class SlackSender:
    """Sends a bot at `url` what Slack would: signed events, interactions and slash commands."""

    url: str
    _seq: list[int]

    def post(self, body: bytes, content_type: str, headers: dict[str, str] | None = None,
             signed: bool = True) -> httpx.Response:
        """One request, its headers and body in one write. (httpx writes the body separately: with fifty
        senders in this process a body could trail its headers by 0.2 s, and the bot, which times its ack
        from the headers, counted that wait as its own.)"""
        all_headers = {"Content-Type": content_type, **(sign(body) if signed else {}), **(headers or {})}
        address = urllib.parse.urlsplit(self.url)
        connection = http.client.HTTPConnection(address.hostname, address.port, timeout=30)
        try:
            connection.request("POST", "/slack/events", body=body, headers=all_headers)
            response = connection.getresponse()
            return httpx.Response(response.status, headers=response.getheaders(), content=response.read())
        finally:
            connection.close()

    def event(self, event: dict, event_id: str | None = None, headers: dict[str, str] | None = None) -> httpx.Response:
        self._seq[0] += 1
        payload = {
            "token": "legacy", "team_id": TEAM, "api_app_id": "A0FAKEAPP", "type": "event_callback",
            "event_id": event_id or f"Ev{self._seq[0]:08d}", "event_time": int(time.time()), "event": event,
            "authorizations": [{"enterprise_id": None, "team_id": TEAM, "user_id": BOT_USER, "is_bot": True}],
        }
        return self.post(json.dumps(payload).encode(), "application/json", headers)

    def interaction(self, payload: dict) -> httpx.Response:
        body = urllib.parse.urlencode({"payload": json.dumps(payload)}).encode()
        return self.post(body, "application/x-www-form-urlencoded")

    def command(self, command: str, user: str, channel: str = "C0GENERAL", text: str = "",
                response_url: str = "https://hooks.slack.invalid/x") -> httpx.Response:
        form = {"command": command, "text": text, "user_id": user, "user_name": user.lower(), "channel_id": channel,
                "team_id": TEAM, "trigger_id": "1337.42.abc", "response_url": response_url,
                "token": "legacy", "api_app_id": "A0FAKEAPP"}
        return self.post(urllib.parse.urlencode(form).encode(), "application/x-www-form-urlencoded")


@dataclass
class RunningBot(SlackSender):
    url: str
    services: Any
    kb: KnowledgeBase
    _loop: asyncio.AbstractEventLoop
    _thread: threading.Thread
    _runner: web.AppRunner
    _seq: list[int] = field(default_factory=lambda: [0])

    def stop(self) -> None:
        async def shutdown() -> None:
            await self._runner.cleanup()
            # Listeners still at work after their ack (e.g. publishing a view): let them finish first.
            others = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            if others:
                await asyncio.wait(others, timeout=5)

        asyncio.run_coroutine_threadsafe(shutdown(), self._loop).result(20)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)


def start_bot(data_dir: Path, index_dir: Path, slack_url: str | None, slack_settings: dict[str, Any] | None = None,
              chat_settings: dict[str, Any] | None = None, teams=None, teams_connections=None,
              graph_token=None, **settings: Any) -> RunningBot:
    """The bot with Slack (pointed at `slack_url`) and/or Teams (`teams`: TeamsSettings) over real HTTP."""
    kb = KnowledgeBase(Settings(data_dir=data_dir, _env_file=None, **settings), index_dir)
    slack = None
    if slack_url is not None:
        slack = SlackSettings(_env_file=None, slack_bot_token="xoxb-test-token", slack_signing_secret=SIGNING_SECRET,
                              slack_api_url=slack_url, AIE_ADMIN_USER_IDS="U0ADMIN01", **(slack_settings or {}))
    bot = make_bot(kb, slack, teams, ChatSettings(_env_file=None, **(chat_settings or {})), teams_connections,
                   graph_token)
    loop = asyncio.new_event_loop()
    ready = threading.Event()
    box: dict[str, Any] = {}

    def run() -> None:
        asyncio.set_event_loop(loop)

        async def boot() -> None:
            runner = web.AppRunner(bot.web_app())
            await runner.setup()
            site = web.TCPSite(runner, "127.0.0.1", 0)
            await site.start()
            box["runner"], box["port"] = runner, site._server.sockets[0].getsockname()[1]
            ready.set()

        loop.run_until_complete(boot())
        loop.run_forever()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    ready.wait(30)
    return RunningBot(f"http://127.0.0.1:{box['port']}", bot.services, kb, loop, thread, box["runner"])


def one_page_index(tmp_path: Path, data_dir: Path) -> Path:
    """An index (tmp_path/index) of one page in tmp_path/docs: the folder, for a test to add files to."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "start.md").write_text("# Start\n\nThe office opens at eight.\n", encoding="utf-8")
    KnowledgeBase(Settings(data_dir=data_dir, _env_file=None), tmp_path / "index").refresh([docs])
    return docs


def wait_for(condition, timeout: float = 120.0, interval: float = 0.1):
    deadline = time.time() + timeout
    while time.time() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError("condition not met in time")
