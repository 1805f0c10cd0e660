"""Replicas of the bot as real `ai-employee serve` processes: one data directory, one Redis, one Slack."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import httpx

from tests.bot.harness import SIGNING_SECRET, SlackSender
from tests.conftest import PROJECT
from tests.processes import free_port, stop_process, wait_until_up


def replica_env(data_dir: Path, slack_url: str, redis_url: str | None, **settings: str) -> dict[str, str]:
    """The environment of a replica; `settings` are AIE_* variables without the prefix (gate_threshold=…)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AIE_", "SLACK_", "CONNECTIONS__"))}
    env.pop("REDIS_URL", None)
    env.update(PYTHONPATH=str(PROJECT), AIE_DATA_DIR=str(data_dir), SLACK_BOT_TOKEN="xoxb-test-token",
               SLACK_SIGNING_SECRET=SIGNING_SECRET, SLACK_API_URL=slack_url, AIE_ADMIN_USER_IDS="U0ADMIN01",
               AIE_LOG_LEVEL="INFO")
    if redis_url:
        env["REDIS_URL"] = redis_url
    env.update({f"AIE_{name.upper()}": str(value) for name, value in settings.items()})
    return env


class Replica(SlackSender):
    def __init__(self, name: str, env: dict[str, str], workdir: Path) -> None:
        self.name, self.port = name, free_port()
        self.url, self._seq = f"http://127.0.0.1:{self.port}", [0]
        self.log = workdir / f"{name}.log"
        with open(self.log, "w") as log:  # cwd: no developer's .env is read
            self.process = subprocess.Popen(
                [sys.executable, "-m", "ai_employee.cli", "serve", "--host", "127.0.0.1", "--port", str(self.port)],
                env=env, cwd=workdir, stdout=log, stderr=subprocess.STDOUT)
        try:
            wait_until_up(f"{self.url}/health", process=self.process, timeout=120)
        except Exception:
            self.stop()
            raise RuntimeError(f"replica {name} did not start:\n{self.log.read_text()[-3000:]}") from None

    def get(self, path: str) -> httpx.Response:
        return httpx.get(f"{self.url}{path}", timeout=10)

    def stop(self) -> None:
        stop_process(self.process, 20)
