"""`ai-employee serve` as a real process: its environment, its log, and whether it came up or refused."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import httpx

from tests.conftest import PROJECT
from tests.processes import free_port, stop_process, wait_until_up

TEAMS = "CONNECTIONS__SERVICE_CONNECTION__SETTINGS__"


def serve_env(data_dir: Path, **variables: str) -> dict[str, str]:
    """Nothing of the developer's shell that configures the bot, then `variables`."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("AIE_", "SLACK_", "CONNECTIONS__", "MILVUS_")) and k != "REDIS_URL"}
    env.update({"PYTHONPATH": str(PROJECT), "AIE_DATA_DIR": str(data_dir), "AIE_LOG_LEVEL": "INFO", **variables})
    return env


class Served:
    """`serve` started with `args`; `url` is where it answers on 127.0.0.1. `open_files`: the most files the
    process may open (its RLIMIT_NOFILE, soft and hard); `under`: a command it is run by (e.g. unshare)."""

    def __init__(self, env: dict[str, str], workdir: Path, *args: str, open_files: int | None = None,
                 under: Sequence[str] = ()) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = workdir / "serve.log"
        with open(self.log, "w") as out:  # cwd: no developer's .env is read
            self.process = subprocess.Popen([*under, sys.executable, "-m", "ai_employee.cli", "serve", "--port",
                                             str(self.port), *args], env=env, cwd=workdir, stdout=out,
                                            stderr=subprocess.STDOUT, preexec_fn=_limit_files(open_files))

    def __enter__(self) -> Served:
        try:
            wait_until_up(f"{self.url}/health", process=self.process, timeout=120)
        except Exception:
            self.stop()
            raise RuntimeError(f"serve did not start:\n{self.text[-3000:]}") from None
        return self

    def __exit__(self, *exc_info) -> None:
        self.stop()

    @property
    def text(self) -> str:
        return self.log.read_text()

    def records(self) -> list[dict]:
        """The JSON log records the bot wrote so far."""
        return [json.loads(line) for line in self.text.splitlines() if line.startswith("{")]

    def get(self, path: str, host: str = "127.0.0.1") -> httpx.Response:
        return httpx.get(f"http://{host}:{self.port}{path}", timeout=5)

    def stop(self) -> None:
        stop_process(self.process, 20)


def _limit_files(most: int | None):
    if most is None:
        return None
    return lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (most, most))


def refused(env: dict[str, str], workdir: Path, *args: str) -> subprocess.CompletedProcess:
    """`serve` run to its end (it is expected to refuse to start)."""
    return subprocess.run([sys.executable, "-m", "ai_employee.cli", "serve", "--port", str(free_port()), *args],
                          env=env, cwd=workdir, capture_output=True, text=True, timeout=120)
