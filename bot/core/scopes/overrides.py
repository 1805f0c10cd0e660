"""Scopes admins set from chat (`/scope` in Slack, `scope` in Teams), kept in SQLite in the data dir so every
replica sees a change on its next question, with an audit trail of who changed what, when."""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from rag.storage import Database, Stored

_SCHEMA = """
CREATE TABLE IF NOT EXISTS scope_overrides (
    platform TEXT NOT NULL, place TEXT NOT NULL, collections TEXT NOT NULL, user TEXT NOT NULL,
    changed REAL NOT NULL, PRIMARY KEY (platform, place)
);
CREATE TABLE IF NOT EXISTS scope_audit (
    platform TEXT NOT NULL, place TEXT NOT NULL, user TEXT NOT NULL, changed REAL NOT NULL,
    old TEXT, new TEXT
);
"""


@dataclass(frozen=True)
class ScopeOverride:
    """An admin's choice of a place's collections, made from chat: it wins over the scopes file."""

    collections: frozenset[str]
    user: str  # the admin who set it
    changed: float


@dataclass(frozen=True)
class AuditEntry:
    platform: str
    place: str
    user: str
    changed: float
    old: frozenset[str] | None  # None: no override (the scopes file or its default applied)
    new: frozenset[str] | None  # None: the override was dropped


def _encode(collections: frozenset[str] | None) -> str | None:
    return None if collections is None else json.dumps(sorted(collections), ensure_ascii=False)


def _decode(text: str | None) -> frozenset[str] | None:
    return None if text is None else frozenset(json.loads(text))


class ScopeOverrides(Stored):
    def __init__(self, path: Path, clock: Callable[[], float] = time.time) -> None:
        self.path = path
        self._clock = clock
        self._db = Database(path, _prepare, timeout=10)  # on a full disk: read-only, and no change is made
        self._lock = threading.Lock()

    def get(self, platform: str, place: str) -> ScopeOverride | None:
        with self._lock:
            return self._current(platform, place)

    def _current(self, platform: str, place: str) -> ScopeOverride | None:
        row = self._conn.execute("SELECT collections, user, changed FROM scope_overrides "
                                 "WHERE platform = ? AND place = ?", (platform, place)).fetchone()
        return None if row is None else ScopeOverride(frozenset(json.loads(row[0])), row[1], row[2])

    def set(self, platform: str, place: str, collections: frozenset[str], user: str) -> ScopeOverride | None:
        """Store an override (blocking); the one it replaced."""
        return self._change(platform, place, collections, user)

    def reset(self, platform: str, place: str, user: str) -> ScopeOverride | None:
        """Drop the override (blocking); the one dropped (None: there was none, nothing is written)."""
        return self._change(platform, place, None, user)

    def _change(self, platform: str, place: str, new: frozenset[str] | None, user: str) -> ScopeOverride | None:
        now = self._clock()
        with self._lock, self._db.writing():
            self._conn.execute("BEGIN IMMEDIATE")  # read and write as one, across processes
            try:
                old = self._current(platform, place)
                if new is None and old is None:
                    self._conn.execute("ROLLBACK")
                    return None
                if new is None:
                    self._conn.execute("DELETE FROM scope_overrides WHERE platform = ? AND place = ?",
                                       (platform, place))
                else:
                    self._conn.execute("INSERT OR REPLACE INTO scope_overrides VALUES (?, ?, ?, ?, ?)",
                                       (platform, place, _encode(new), user, now))
                self._conn.execute("INSERT INTO scope_audit VALUES (?, ?, ?, ?, ?, ?)",
                                   (platform, place, user, now, _encode(old.collections if old else None),
                                    _encode(new)))
                self._conn.execute("COMMIT")
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
        return old

    def audit(self, platform: str | None = None, place: str | None = None) -> list[AuditEntry]:
        """Every change, oldest first (of one place, when named)."""
        query, args = "SELECT platform, place, user, changed, old, new FROM scope_audit", []
        if platform is not None and place is not None:
            query, args = query + " WHERE platform = ? AND place = ?", [platform, place]
        with self._lock:
            rows = self._conn.execute(query + " ORDER BY changed, rowid", args).fetchall()
        return [AuditEntry(p, pl, u, c, _decode(o), _decode(n)) for p, pl, u, c, o, n in rows]


def _prepare(connection: sqlite3.Connection) -> None:
    connection.execute("PRAGMA journal_mode=WAL")
    connection.execute("PRAGMA synchronous=FULL")
    connection.executescript(_SCHEMA)
