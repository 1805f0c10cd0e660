"""Last commit dates of the indexed files when they sit in a git checkout.

A fresh clone gives every file today's modification time; the date of the commit that last changed a
file is the better "when was this edition made". One `git log` pass per repository finds every file's
date (stopping as soon as all are found); files with uncommitted changes keep their file time. Without
git, outside a repository, or on any git error the result is simply empty.
"""

from __future__ import annotations

import logging
import os
import subprocess
import time
from collections.abc import Iterable
from pathlib import Path

_log = logging.getLogger(__name__)
_TIMEOUT = 120.0
_READ_SIZE = 1 << 16


def _git_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env["GIT_OPTIONAL_LOCKS"] = "0"  # `git status` must not write the user's index
    env["LC_ALL"] = "C"
    return env


def _git(cwd: Path, *args: str, timeout: float = _TIMEOUT) -> bytes | None:
    try:
        done = subprocess.run(["git", "--literal-pathspecs", *args], cwd=cwd, env=_git_env(),
                              capture_output=True, timeout=timeout, check=False)
    except (OSError, subprocess.SubprocessError) as exc:
        _log.debug("git %s in %s failed: %s", args[0], cwd, exc)
        return None
    return done.stdout if done.returncode == 0 else None


def _toplevel(folder: Path) -> Path | None:
    out = _git(folder, "rev-parse", "--show-toplevel", timeout=30)
    return Path(os.fsdecode(out.rstrip(b"\n"))).resolve() if out else None


def _dirty(top: Path, pathspec: str) -> set[str] | None:
    """Paths (relative to the top) with uncommitted changes or not tracked at all."""
    out = _git(top, "status", "--porcelain=v1", "-z", "--untracked-files=all", "--", pathspec)
    if out is None:
        return None
    dirty: set[str] = set()
    entries = out.split(b"\0")
    i = 0
    while i < len(entries):
        entry = entries[i]
        i += 1
        if len(entry) < 4:
            continue
        dirty.add(os.fsdecode(entry[3:]))
        if entry[:1] in (b"R", b"C"):
            i += 1  # the rename's origin follows
    return dirty


def _last_commits(top: Path, pathspec: str, wanted: set[str]) -> dict[str, str]:
    """`git log` newest first, reading until every wanted path has its date."""
    found: dict[str, str] = {}
    cmd = ["git", "--literal-pathspecs", "log", "--no-renames", "--name-only", "-z", "--format=%x1e%cs",
           "--", pathspec]
    try:
        process = subprocess.Popen(cmd, cwd=top, env=_git_env(), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    except OSError as exc:
        _log.debug("git log in %s failed: %s", top, exc)
        return found
    deadline = time.monotonic() + _TIMEOUT
    current = ""
    pending = b""
    try:
        assert process.stdout is not None
        while len(found) < len(wanted) and time.monotonic() < deadline:
            block = process.stdout.read1(_READ_SIZE)  # type: ignore[attr-defined]
            if not block:
                break
            *tokens, pending = (pending + block).split(b"\0")
            for token in tokens:
                token = token.lstrip(b"\n")
                if token.startswith(b"\x1e"):
                    current = token[1:].decode("ascii", errors="replace")
                elif token:
                    name = os.fsdecode(token)
                    if name in wanted and name not in found and current:
                        found[name] = current
    finally:
        process.kill()
        process.wait()
    return found


def commit_dates(roots: Iterable[Path], files: Iterable[Path]) -> dict[Path, str]:
    """Resolved file path → its last commit date (YYYY-MM-DD), for committed files without local changes."""
    files = [f.resolve() for f in files]
    dates: dict[Path, str] = {}
    tops: dict[Path, Path | None] = {}
    for root in roots:
        root = root.resolve()
        folder = root if root.is_dir() else root.parent
        if folder not in tops:
            tops[folder] = _toplevel(folder)
        top = tops[folder]
        if top is None:
            continue
        under = [f for f in files if f == root or root in f.parents]
        wanted = {f.relative_to(top).as_posix(): f for f in under if top in f.parents}
        if not wanted:
            continue
        pathspec = root.relative_to(top).as_posix() if root != top else "."
        dirty = _dirty(top, pathspec)
        if dirty is None:
            continue
        clean = {name for name in wanted if name not in dirty}
        for name, when in _last_commits(top, pathspec, clean).items():
            dates[wanted[name]] = when
    return dates
