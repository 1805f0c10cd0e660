"""Running the `git` command line for the git source: a clean environment, settings passed for one command
only, a hard time limit, and messages with no credential in them.

Settings that carry a secret (the `Authorization` header of an HTTPS token) reach git through the
GIT_CONFIG_COUNT / GIT_CONFIG_KEY_n / GIT_CONFIG_VALUE_n environment variables of that one process: never
in a file, never on the command line (which every user of the machine can read in the process list).
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path

from rag.safety.redaction import redact

# The GIT_* variables of our own environment that still apply: how to reach a server (ssh, certificates).
# The others (GIT_DIR, GIT_TRACE_CURL, GIT_CONFIG_*...) would point git at another repository or log headers.
_KEPT = ("GIT_SSH", "GIT_SSH_COMMAND", "GIT_SSH_VARIANT", "GIT_SSL_CAINFO", "GIT_SSL_CAPATH",
         "GIT_PROXY_SSL_CAINFO")
_MESSAGE_PREFIX = re.compile(r"^(?:fatal|error|remote|warning): ?", re.IGNORECASE)


class GitFailed(Exception):
    """A git command that failed: its last meaningful stderr line (redacted) or that it timed out."""

    def __init__(self, command: str, reason: str, *, timed_out: bool = False) -> None:
        super().__init__(f"git {command}: {reason}")
        self.command = command
        self.reason = reason
        self.timed_out = timed_out


def git_env(config: Sequence[tuple[str, str]] = ()) -> dict[str, str]:
    """The environment of one git process: never a prompt, messages in English (they are matched), and
    `config` as command-scoped settings."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_") or k in _KEPT}
    env.update(LC_ALL="C", GIT_TERMINAL_PROMPT="0", GIT_ASKPASS="", GIT_OPTIONAL_LOCKS="0")
    env["GIT_CONFIG_COUNT"] = str(len(config))
    for i, (key, value) in enumerate(config):
        env[f"GIT_CONFIG_KEY_{i}"] = key
        env[f"GIT_CONFIG_VALUE_{i}"] = value
    return env


def _reason(stderr: bytes, secrets: Sequence[str]) -> str:
    lines = [line.strip() for line in stderr.decode("utf-8", errors="replace").splitlines() if line.strip()]
    fatal = [line for line in lines if line.lower().startswith(("fatal:", "error:"))]
    line = (fatal or lines or ["no message"])[0]  # the first says what; those after say what followed
    return redact(_MESSAGE_PREFIX.sub("", line), secrets)[:300]


def run_git(cwd: Path, *args: str, config: Sequence[tuple[str, str]] = (), timeout: float = 120.0,
            secrets: Sequence[str] = (), check: bool = True) -> subprocess.CompletedProcess[bytes]:
    """Run `git args` in `cwd`; raises GitFailed (a redacted one-line reason) when it fails or times out.

    git runs in a session of its own so that a timeout ends its helpers too (git-remote-https, ssh)."""
    command = ["git", "--literal-pathspecs", *args]
    try:
        process = subprocess.Popen(command, cwd=cwd, env=git_env(config), stdin=subprocess.DEVNULL,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    except OSError as exc:
        raise GitFailed(args[0], f"git cannot be run ({exc.strerror or exc.__class__.__name__})") from None
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        raise GitFailed(args[0], f"no answer within {timeout:.0f} s", timed_out=True) from None
    done = subprocess.CompletedProcess(command, process.returncode, stdout, stderr)
    if check and done.returncode != 0:
        raise GitFailed(args[0], _reason(stderr, secrets))
    return done


def output(cwd: Path, *args: str, timeout: float = 120.0) -> bytes:
    """The standard output of a local git command (no network, no secret)."""
    return run_git(cwd, *args, timeout=timeout).stdout


def last_commits(repo: Path, revision: str, pathspec: str, wanted: set[str],
                 timeout: float = 120.0) -> dict[str, tuple[str, str]]:
    """Path → (full hash, YYYY-MM-DD committer date) of the newest commit in `revision` (a commit or a
    range) that changed it, for the `wanted` paths: one `git log` pass, read until every one is found."""
    found: dict[str, tuple[str, str]] = {}
    command = ["git", "--literal-pathspecs", "log", "--no-renames", "--name-only", "-z", "--format=%x1e%H%x1f%cs",
               revision, "--", pathspec]
    try:
        process = subprocess.Popen(command, cwd=repo, env=git_env(), stdin=subprocess.DEVNULL,
                                   stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, start_new_session=True)
    except OSError as exc:
        raise GitFailed("log", f"git cannot be run ({exc.strerror or exc.__class__.__name__})") from None
    deadline = time.monotonic() + timeout
    current: tuple[str, str] | None = None
    pending = b""
    try:
        assert process.stdout is not None
        while len(found) < len(wanted):
            if time.monotonic() > deadline:
                raise GitFailed("log", f"no answer within {timeout:.0f} s", timed_out=True)
            block = process.stdout.read1(1 << 16)  # type: ignore[attr-defined]
            if not block:
                break
            *tokens, pending = (pending + block).split(b"\0")
            for token in tokens:
                token = token.lstrip(b"\n")
                if token.startswith(b"\x1e"):
                    sha, _, day = token[1:].decode("ascii", errors="replace").partition("\x1f")
                    current = (sha, day)
                elif token and current is not None:
                    path = os.fsdecode(token)
                    if path in wanted and path not in found:
                        found[path] = current
        else:
            return found  # all found: the rest of the history is not read
    finally:
        process.kill()  # a process that already ended keeps its exit status
        process.wait()
    if process.returncode != 0:
        raise GitFailed("log", f"cannot read the history of {revision}")
    return found
