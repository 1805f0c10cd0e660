"""What the data dir remembers of each source between syncs, in `sources/<name>/state.json` beside the
folder its connector keeps: the connector's own state (a commit, ETags, page versions), each document's
metadata, and how the last syncs went (for `sources list`, the admins' table and the schedule). The run
syncing a source holds its lock, `sources/.locks/<name>.lock`, so that no other run touches its folder."""

from __future__ import annotations

import json
import logging
import os
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from filelock import FileLock, Timeout

from rag.index.metadata import DocumentMeta

_log = logging.getLogger(__name__)
RETRY_FIRST, RETRY_MAX = 60.0, 3600.0  # a failed sync is tried again after 1, 2, 4… minutes, at most hourly


@dataclass
class SyncStatus:
    documents: int = 0  # in the live index
    last_attempt: float | None = None  # epoch seconds
    last_success: float | None = None
    last_seconds: float | None = None  # how long the last successful sync took
    last_error: str = ""  # safe to show an admin; "" when the last sync went well
    error_variable: str | None = None  # the environment variable to fix, when one is at fault
    failures: int = 0  # failed syncs since the last good one
    retry_after: float | None = None  # seconds the source asked us to wait
    told: bool = False  # the admins were told of `last_error`
    by: str = ""  # who last started a sync of it (the schedule leaves it): whom to tell when it fails
    calls: int = 0  # requests the last fetch made

    def next_run(self, every: float) -> float | None:
        """When the schedule syncs it next (None: only on demand). A failure is retried sooner, backing off
        (never sooner than the source asked with Retry-After)."""
        if every <= 0:
            return None
        if self.last_attempt is None:
            return 0.0
        wait = every
        if self.failures:
            wait = min(wait, RETRY_FIRST * 2 ** (self.failures - 1), RETRY_MAX)
            wait = max(wait, self.retry_after or 0.0)
        return self.last_attempt + wait


@dataclass
class SourceState:
    connector: dict[str, Any] = field(default_factory=dict)  # what the connector's next fetch is given
    root: str = ""  # the folder its documents were last fetched to
    documents: dict[str, dict[str, Any]] = field(default_factory=dict)  # name in root -> DocumentMeta
    status: SyncStatus = field(default_factory=SyncStatus)

    def metadata(self) -> dict[str, DocumentMeta]:
        return {name: DocumentMeta.from_dict(meta) for name, meta in self.documents.items()}


class SourceBusy(RuntimeError):
    """Another run (in this process or another) is syncing the source."""


class _SyncLock:
    """One source's lock (`filelock`: an OS lock on a file, released if the process dies), waited for up to
    `wait` seconds."""

    def __init__(self, path: Path, wait: float) -> None:
        self._path = path
        self._lock = FileLock(path, timeout=wait, thread_local=False)

    def __enter__(self) -> None:
        self._path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._lock.acquire()
        except Timeout:
            raise SourceBusy() from None

    def __exit__(self, *exc: object) -> None:
        self._lock.release()


class StateStore:
    """One state file a source, written whole and atomically (a crash leaves the last good one)."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def workdir(self, name: str) -> Path:
        return self.root / name

    def sync_lock(self, name: str, wait: float = 0.0) -> _SyncLock:
        """Held by the one run syncing source `name` (SourceBusy when another run still holds it after `wait`
        seconds)."""
        return _SyncLock(self.root / ".locks" / f"{name}.lock", wait)

    def _file(self, name: str) -> Path:
        return self.workdir(name) / "state.json"

    def load(self, name: str) -> SourceState:
        try:
            data = json.loads(self._file(name).read_text(encoding="utf-8"))
            return SourceState(data.get("connector", {}), data.get("root", ""), data.get("documents", {}),
                               SyncStatus(**data.get("status", {})))
        except FileNotFoundError:
            return SourceState()
        except (OSError, ValueError, TypeError) as exc:  # unreadable: the next fetch starts afresh, deletes nothing
            _log.warning("the state of source %s cannot be read (%s); its next sync starts afresh", name, exc)
            return SourceState()

    def save(self, name: str, state: SourceState) -> None:
        folder = self.workdir(name)
        folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".state-", suffix=".json")
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump(asdict(state), out, ensure_ascii=False)
        os.replace(tmp, self._file(name))
