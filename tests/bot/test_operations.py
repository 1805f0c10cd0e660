"""Running the bot: a Redis that hangs, a reindex that fails, and starting without warnings."""

from __future__ import annotations

import logging
import socket
import threading
import time

import httpx
import pytest

from bot.slack.admins import SlackAdmins
from bot.slack.app import create_app
from bot.slack.config import SlackSettings
from bot.slack.services import SlackServices
from tests.bot.harness import start_bot, wait_for
from tests.bot.slack.test_bot import final_answers, mention
from tests.fakes.slack_api import SlackApiServer


@pytest.fixture
def slack():
    with SlackApiServer(users={"U0ADMIN01": {}, "U0PLAIN01": {}}) as server:
        yield server
        server.assert_no_rejections()


class SilentServer:
    """Accepts TCP connections and reads what is sent, but never answers: a Redis that hangs."""

    def __init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.received = threading.Event()
        self._connections: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                connection, _ = self.listener.accept()
            except OSError:
                return
            self._connections.append(connection)
            threading.Thread(target=self._read, args=(connection,), daemon=True).start()

    def _read(self, connection: socket.socket) -> None:
        try:
            while connection.recv(4096):
                self.received.set()
        except OSError:
            pass

    def close(self) -> None:
        self.listener.close()
        for connection in self._connections:
            connection.close()


def test_a_redis_that_never_answers_holds_up_neither_slack_nor_the_answer(handbook_index, slack, tmp_path):  # noqa: F811
    redis = SilentServer()
    data_dir, index_dir = handbook_index
    bot = start_bot(data_dir, index_dir, slack.base_url, gate_threshold=0.85, feedback_db=tmp_path / "f.sqlite3",
                    redis_url=f"redis://:s3cret@127.0.0.1:{redis.port}/0")
    try:
        redis.received.clear()  # the answer cache's ping at start-up
        event, acked = mention(slack, "How long must a password be?"), {}

        def send() -> None:
            began = time.perf_counter()
            acked["status"] = bot.event(event, event_id="EvSILENT001").status_code
            acked["seconds"] = time.perf_counter() - began

        sender = threading.Thread(target=send)
        sender.start()
        assert redis.received.wait(10), "the event's de-duplication asks Redis"
        began = time.perf_counter()
        assert httpx.get(f"{bot.url}/health", timeout=10).status_code == 200
        health = time.perf_counter() - began
        sender.join(10)
        assert health < 0.15, f"the event loop kept serving while Redis was silent ({health:.3f} s)"
        assert acked["status"] == 200 and acked["seconds"] < 1.5, acked
        wait_for(lambda: final_answers(slack))
        retry = {"X-Slack-Retry-Num": "1", "X-Slack-Retry-Reason": "http_timeout"}
        assert bot.event(event, event_id="EvSILENT001", headers=retry).status_code == 200
        time.sleep(2)
        assert len(slack.calls_to("chat.startStream")) == 1 and len(final_answers(slack)) == 1
    finally:
        bot.stop()
        redis.close()


def test_a_failed_reindex_gives_the_admin_a_short_reason_and_the_log_the_details(slack, tmp_path, shared_data_dir,
                                                                                caplog):
    empty = tmp_path / "empty-docs"
    empty.mkdir()
    bot = start_bot(shared_data_dir, tmp_path / "index", slack.base_url, docs_paths=str(empty))
    try:
        with caplog.at_level(logging.ERROR, logger="bot.core.reindex"):
            assert "Reindexing" in bot.command("/reindex", "U0ADMIN01").text
            failed = wait_for(lambda: [c for c in slack.calls_to("chat.update") + slack.calls_to("chat.postMessage")
                                       if ":x:" in c.args.get("text", "")])[0]
    finally:
        bot.stop()
    text = failed.args["text"]
    assert "previous index is still serving" in text and "no documents that could be indexed were found" in text
    assert str(empty) not in text and "skipped" not in text, "no exception text in the channel"
    assert str(empty) in caplog.text, "the details are in the log"


def test_building_the_app_logs_no_unused_token_warning(monkeypatch, caplog):
    monkeypatch.setenv("SLACK_BOT_TOKEN", "xoxb-from-the-environment")
    settings = SlackSettings(_env_file=None, slack_signing_secret="secret", slack_api_url="http://127.0.0.1:9/api")
    services = SlackServices(answerer=None, feedback=None, reindexer=None, deliveries=None, conversation_state=None,
                             adjuster=None, scopes=None, memory=None, index=None, settings=settings,
                             admins=SlackAdmins(settings.admins))
    with caplog.at_level(logging.DEBUG):
        app = create_app(services)
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING], caplog.text
    assert app.client.token == "xoxb-from-the-environment" and app.client.base_url == "http://127.0.0.1:9/api/"
    handlers = {type(h).__name__ for h in app.client.retry_handlers}
    assert {"RateLimitRetries", "AsyncServerErrorRetryHandler"} <= handlers  # rate limits: waits capped
