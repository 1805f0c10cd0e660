"""The data dir's disk when it is full: telling that failure from others, and SQLite databases that can still be
read meanwhile (as last saved) and are opened for writing again once there is room."""

from __future__ import annotations

import errno
import shutil
import sqlite3
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

_NO_SPACE = {errno.ENOSPC, errno.EDQUOT}
# SQLite's own word for it; a write-ahead log or its index that cannot grow is an I/O error or a file it cannot
# open, which a disk without free space explains
_FULL = {sqlite3.SQLITE_FULL}
_FULL_IF_NO_SPACE = {sqlite3.SQLITE_IOERR, sqlite3.SQLITE_CANTOPEN}


class DiskFull(OSError):
    """Something could not be saved because the disk holding it is full."""

    def __init__(self, where: Path) -> None:
        super().__init__(errno.ENOSPC, full_disk(where))


def full_disk(where: Path) -> str:
    return f"the disk holding {where} is full"


def out_of_space(exc: BaseException, where: Path) -> bool:
    """Whether `exc`, or an error it was raised from, means that the disk holding `where` is full."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if _says_full(current, where):
            return True
        current = current.__cause__ or current.__context__
    return False


def _says_full(exc: BaseException, where: Path) -> bool:
    if isinstance(exc, OSError):
        return exc.errno in _NO_SPACE
    if isinstance(exc, sqlite3.Error):
        code = (getattr(exc, "sqlite_errorcode", None) or 0) & 0xFF  # the primary code of an extended one
        return code in _FULL or (code in _FULL_IF_NO_SPACE and _no_room(where))
    return False


def _no_room(where: Path) -> bool:
    try:
        return shutil.disk_usage(where).free == 0
    except OSError:
        return False


class Database:
    """A SQLite file opened for writing and prepared by `prepare` (its pragmas and tables). On a full disk it is
    opened read-only instead, as last saved (an empty one when it did not exist), with `read_only` saying why;
    `reopen` tries again."""

    def __init__(self, path: Path, prepare: Callable[[sqlite3.Connection], None], timeout: float = 5.0) -> None:
        self.path = path
        self._prepare = prepare
        self._timeout = timeout
        self.connection, self.read_only = self._open()

    def _open(self) -> tuple[sqlite3.Connection, str | None]:
        connection = None
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            connection = self._connect(str(self.path))
            self._prepare(connection)
            return connection, None
        except (OSError, sqlite3.Error) as exc:
            if connection is not None:
                connection.close()
            if not out_of_space(exc, self.path.parent):
                raise
        return self._as_saved(), full_disk(self.path.parent)

    def _as_saved(self) -> sqlite3.Connection:
        if not self.path.exists():
            connection = self._connect(":memory:")
            self._prepare(connection)
            return connection
        # immutable: read without the write-ahead log's index, which a full disk has no room to make
        return self._connect(f"{self.path.resolve().as_uri()}?immutable=1", uri=True)

    def _connect(self, name: str, uri: bool = False) -> sqlite3.Connection:
        return sqlite3.connect(name, uri=uri, check_same_thread=False, isolation_level=None, timeout=self._timeout)

    def reopen(self) -> bool:
        """Whether it can be written: when it was opened read-only, it is opened for writing if it now can be."""
        if self.read_only is None:
            return True
        try:
            connection, problem = self._open()
        except (OSError, sqlite3.Error):  # e.g. locked by another process: still read-only for now
            return False
        if problem is not None:
            connection.close()
            return False
        self.connection.close()
        self.connection, self.read_only = connection, None
        return True

    @contextmanager
    def writing(self) -> Iterator[sqlite3.Connection]:
        """Its connection, to write with; DiskFull when it cannot be written (opened for writing now if it was
        read-only and there is room) or when the disk fills up meanwhile."""
        if not self.reopen():
            raise DiskFull(self.path.parent)
        try:
            yield self.connection
        except sqlite3.Error as exc:
            if out_of_space(exc, self.path.parent):
                raise DiskFull(self.path.parent) from exc
            raise

    def close(self) -> None:
        self.connection.close()


class Stored:
    """A store kept in one `Database` (`_db`), used under `_lock`."""

    _db: Database
    _lock: threading.Lock

    @property
    def _conn(self) -> sqlite3.Connection:
        return self._db.connection

    @property
    def read_only(self) -> str | None:
        """Why nothing can be written (the disk is full), or None."""
        return self._db.read_only

    def reopen(self) -> bool:
        """Whether it can be written (opened for writing now if it was read-only and the disk has room)."""
        with self._lock:
            return self._db.reopen()

    def close(self) -> None:
        with self._lock:
            self._db.close()


def unwritable(stores: Iterable[Stored], where: Path) -> str | None:
    """Why the stores in `where` (a data dir) cannot all be written now, or None when they can."""
    for store in stores:
        if not store.reopen():
            return store.read_only
    return full_disk(where) if _no_room(where) else None
