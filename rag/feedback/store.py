"""Durable feedback on answers and citations (SQLite).

Every answer shown to a user is recorded with its question, text, cited passages, index version and
the question's embedding, and kept for a retention period (`AIE_FEEDBACK_RETENTION_DAYS`, 180 days by
default): older answers and their votes are pruned when the store opens and then at most once an hour,
in small batches so a vote never waits long. Votes are 👍/👎 on a whole answer (with an optional
reason), or "this source is wrong" / "this source helped" on one citation; a person voting again on
the same target changes their vote instead of adding one. Admins can confirm or undo what the votes
on a passage do (their verdicts, kept in the `overrides` table). Several processes may share the file:
`data_version` changes whenever any of them writes, so readers know to refresh.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from rag.storage import Database, Stored
from rag.types import EVERYTHING, Scope

ANSWER = "answer"
REASONS = ("wrong source", "outdated", "incomplete", "other")
PRUNE_EVERY_SECONDS = 3600.0
_PRUNE_BATCH = 200  # answers deleted per transaction: a vote waits for one batch at most


def citation_target(marker: int) -> str:
    return f"citation:{marker}"


@dataclass(frozen=True)
class CitedChunk:
    chunk_id: str
    file: str
    location: str  # the footnote text, e.g. "Travel Policy › Meals, p. 3 · v2026-11-02"
    text: str = ""  # the passage as it was cited (shown again even after a reindex replaced it)
    title: str = ""
    url: str | None = None


@dataclass(frozen=True)
class RecordedAnswer:
    answer_id: str
    question: str
    answer: str
    citations: list[CitedChunk]  # in marker order: citations[0] is [1]
    index_version: str
    channel: str
    user: str
    created: float
    platform: str = "slack"
    scope: str = ""  # Scope.collections_key of the place it was asked in
    # The files whose words it may show uncited — a refusal's suggestions, what the answer model read (None:
    # recorded before they were kept)
    sources: tuple[str, ...] | None = None


@dataclass(frozen=True)
class Vote:
    answer_id: str
    user: str
    target: str  # "answer" or "citation:<marker>"
    value: int  # +1 (helpful / this source helped) or -1 (not helpful / this source is wrong)
    chunk_id: str | None
    channel: str
    updated: float
    admin: bool = False
    reason: str | None = None  # for a 👎: one of REASONS
    comment: str | None = None
    platform: str = "slack"


@dataclass(frozen=True)
class CitationVote:
    """A vote on one cited passage, with the question it was asked for (what the adjuster reads)."""

    chunk_id: str
    user: str
    value: int
    admin: bool
    updated: float
    question: str
    question_vector: np.ndarray | None
    cited: CitedChunk
    scope: str = ""  # the collections of the answer the vote was given on (Scope.collections_key)


@dataclass(frozen=True)
class PassageVerdict:
    """An admin's confirm or undo of what the votes on a passage do."""

    chunk_id: str
    action: str  # "confirm" (demote now, as an admin's flag) or "undo" (votes so far no longer count)
    user: str
    created: float


_SCHEMA = """
CREATE TABLE IF NOT EXISTS answers (
    answer_id TEXT PRIMARY KEY, question TEXT NOT NULL, answer TEXT NOT NULL, citations TEXT NOT NULL,
    index_version TEXT NOT NULL, channel TEXT NOT NULL, user TEXT NOT NULL, created REAL NOT NULL,
    question_vector BLOB
);
CREATE TABLE IF NOT EXISTS votes (
    answer_id TEXT NOT NULL REFERENCES answers(answer_id), user TEXT NOT NULL, target TEXT NOT NULL,
    value INTEGER NOT NULL, chunk_id TEXT, channel TEXT NOT NULL, updated REAL NOT NULL,
    PRIMARY KEY (answer_id, user, target)
);
CREATE TABLE IF NOT EXISTS overrides (
    chunk_id TEXT NOT NULL, action TEXT NOT NULL, user TEXT NOT NULL, created REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS answers_created ON answers (created);
CREATE INDEX IF NOT EXISTS votes_chunk ON votes (chunk_id);
"""
# Columns added after the first release: added to older databases when they are opened.
_ADDED_COLUMNS = {
    # scope: the collections the question was answered from ("" = all); votes apply within it only
    # sources: the files whose words an answer may show uncited (NULL: recorded before they were kept)
    "answers": {"platform": "TEXT NOT NULL DEFAULT 'slack'", "scope": "TEXT NOT NULL DEFAULT ''",
                "sources": "TEXT"},
    "votes": {"admin": "INTEGER NOT NULL DEFAULT 0", "reason": "TEXT", "comment": "TEXT",
              "platform": "TEXT NOT NULL DEFAULT 'slack'"},
}
_ANSWER_COLUMNS = ("answer_id, question, answer, citations, index_version, channel, user, created, platform, "
                   "scope, sources")
_VOTE_COLUMNS = "answer_id, user, target, value, chunk_id, channel, updated, admin, reason, comment, platform"


class FeedbackStore(Stored):
    def __init__(self, path: Path, retention_days: float = 180, clock: Callable[[], float] = time.time) -> None:
        self.path = path
        self.retention_days = retention_days  # 0 or less: keep everything
        self._clock = clock
        self._db = Database(path, _prepare, timeout=10)  # on a full disk: read-only, and nothing is recorded
        self._lock = threading.Lock()
        self._prune_lock = threading.Lock()
        self._writes = 0  # this connection's own writes (SQLite's data_version counts only the others')
        self._last_prune = self._clock()
        self.on_vote: Callable[[str, int], None] | None = None  # told (target, value) of each vote recorded
        self.prune()

    @property
    def data_version(self) -> tuple[int, int]:
        """Changes whenever this process or another one wrote to the store."""
        with self._lock:
            return self._conn.execute("PRAGMA data_version").fetchone()[0], self._writes

    def now(self) -> float:
        return self._clock()

    def record_answer(
        self, question: str, answer: str, citations: list[CitedChunk], index_version: str, channel: str, user: str,
        question_vector: np.ndarray | None = None, platform: str = "slack", scope: Scope = EVERYTHING,
        sources: list[str] | None = None,
    ) -> str:
        """`sources`: the files whose words the answer may show without citing them."""
        answer_id = uuid.uuid4().hex
        blob = None if question_vector is None else np.asarray(question_vector, dtype=np.float32).tobytes()
        cited = json.dumps([asdict(c) for c in citations], ensure_ascii=False)
        with self._lock, self._db.writing():
            self._conn.execute(
                "INSERT INTO answers (answer_id, question, answer, citations, index_version, channel, user, "
                "created, question_vector, platform, scope, sources) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (answer_id, question, answer, cited, index_version, channel, user, self._clock(), blob, platform,
                 scope.collections_key, json.dumps(sorted(set(sources or ())), ensure_ascii=False)),
            )
        if self._clock() - self._last_prune >= PRUNE_EVERY_SECONDS:
            self._last_prune = self._clock()
            self.prune()
        return answer_id

    def prune(self) -> int:
        """Delete answers older than the retention period, with their votes; returns how many answers went.

        Runs in batches, each its own short transaction, so votes recorded meanwhile are not held up.
        """
        if self.retention_days <= 0 or self.read_only or not self._prune_lock.acquire(blocking=False):
            return 0
        try:
            cutoff = self._clock() - self.retention_days * 86400
            removed = 0
            while True:
                with self._lock:
                    self._conn.execute("BEGIN IMMEDIATE")
                    try:
                        ids = [row[0] for row in self._conn.execute(
                            "SELECT answer_id FROM answers WHERE created < ? LIMIT ?", (cutoff, _PRUNE_BATCH))]
                        if ids:
                            marks = ",".join("?" * len(ids))
                            self._conn.execute(f"DELETE FROM votes WHERE answer_id IN ({marks})", ids)
                            self._conn.execute(f"DELETE FROM answers WHERE answer_id IN ({marks})", ids)
                        self._conn.execute("COMMIT")
                    except BaseException:
                        self._conn.execute("ROLLBACK")
                        raise
                    if ids:
                        self._writes += 1  # adjustments learned from those votes are gone too
                removed += len(ids)
                if len(ids) < _PRUNE_BATCH:
                    return removed
        finally:
            self._prune_lock.release()

    def answer(self, answer_id: str) -> RecordedAnswer | None:
        with self._lock:
            row = self._conn.execute(f"SELECT {_ANSWER_COLUMNS} FROM answers WHERE answer_id = ?",
                                     (answer_id,)).fetchone()
        return None if row is None else _answer(row)

    def vote(self, answer_id: str, user: str, target: str, value: int, channel: str, *, admin: bool = False,
             platform: str | None = None) -> bool:
        """Record or change a vote; True when it is new, False when it replaced the user's earlier vote."""
        if value not in (1, -1):
            raise ValueError("a vote is +1 or -1")
        recorded = self.answer(answer_id)
        if recorded is None:
            raise KeyError(f"unknown answer {answer_id}")
        chunk_id = None
        if target.startswith("citation:"):
            marker = int(target.split(":", 1)[1])
            if not 1 <= marker <= len(recorded.citations):
                raise ValueError(f"answer {answer_id} has no citation [{marker}]")
            chunk_id = recorded.citations[marker - 1].chunk_id
        elif target != ANSWER:
            raise ValueError(f"unknown vote target {target!r}")
        with self._lock, self._db.writing():
            existed = self._conn.execute(
                "SELECT 1 FROM votes WHERE answer_id = ? AND user = ? AND target = ?", (answer_id, user, target)
            ).fetchone()
            # A changed vote drops the reason given for the old one.
            self._conn.execute(
                f"INSERT INTO votes ({_VOTE_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, NULL, NULL, ?) "
                "ON CONFLICT (answer_id, user, target) DO UPDATE SET value = excluded.value, "
                "updated = excluded.updated, channel = excluded.channel, admin = excluded.admin, "
                "reason = CASE WHEN votes.value = excluded.value THEN votes.reason END, "
                "comment = CASE WHEN votes.value = excluded.value THEN votes.comment END",
                (answer_id, user, target, value, chunk_id, channel, self._clock(), int(admin),
                 platform or recorded.platform),
            )
            self._writes += 1
        if self.on_vote is not None:
            self.on_vote(target, value)
        return existed is None

    def set_reason(self, answer_id: str, user: str, reason: str, comment: str | None = None) -> None:
        """Attach the reason for a 👎 (one of REASONS) and an optional comment to the user's vote."""
        if reason not in REASONS:
            raise ValueError(f"reason must be one of {', '.join(REASONS)}")
        comment = (comment or "").strip()[:2000] or None
        with self._lock, self._db.writing():
            changed = self._conn.execute(
                "UPDATE votes SET reason = ?, comment = ? WHERE answer_id = ? AND user = ? AND target = ? "
                "AND value < 0", (reason, comment, answer_id, user, ANSWER)).rowcount
            self._writes += 1
        if not changed:
            raise KeyError(f"no 👎 by {user} on answer {answer_id}")

    def set_comment(self, answer_id: str, user: str, comment: str | None) -> None:
        """Attach a free-text comment to the user's 👍 or 👎 on an answer (its reason, if any, is kept)."""
        comment = (comment or "").strip()[:2000] or None
        with self._lock, self._db.writing():
            changed = self._conn.execute(
                "UPDATE votes SET comment = ? WHERE answer_id = ? AND user = ? AND target = ?",
                (comment, answer_id, user, ANSWER)).rowcount
            self._writes += 1
        if not changed:
            raise KeyError(f"no vote by {user} on answer {answer_id}")

    def votes(self, since: float | None = None) -> list[Vote]:
        with self._lock:
            rows = self._conn.execute(
                f"SELECT {_VOTE_COLUMNS} FROM votes WHERE updated >= ? ORDER BY updated", (since or 0.0,)
            ).fetchall()
        return [_vote(row) for row in rows]

    def citation_votes(self) -> list[CitationVote]:
        """Every vote on a cited passage, with the question and the passage as it was cited."""
        with self._lock:
            rows = self._conn.execute(
                "SELECT v.chunk_id, v.user, v.value, v.admin, v.updated, v.target, a.question, a.question_vector, "
                "a.citations, a.scope FROM votes v JOIN answers a USING (answer_id) WHERE v.chunk_id IS NOT NULL"
            ).fetchall()
        out = []
        for chunk_id, user, value, admin, updated, target, question, blob, citations, scope in rows:
            cited = CitedChunk(**json.loads(citations)[int(target.split(":", 1)[1]) - 1])
            vector = None if blob is None else np.frombuffer(blob, dtype=np.float32)
            out.append(CitationVote(chunk_id, user, value, bool(admin), updated, question, vector, cited, scope))
        return out

    def record_verdict(self, chunk_id: str, action: str, user: str) -> None:
        if action not in ("confirm", "undo"):
            raise ValueError("a verdict is 'confirm' or 'undo'")
        with self._lock, self._db.writing():
            self._conn.execute("INSERT INTO overrides VALUES (?, ?, ?, ?)", (chunk_id, action, user, self._clock()))
            self._writes += 1

    def verdicts(self) -> list[PassageVerdict]:
        with self._lock:
            rows = self._conn.execute("SELECT chunk_id, action, user, created FROM overrides ORDER BY created").fetchall()
        return [PassageVerdict(*row) for row in rows]

    def export(self, since: float | None = None) -> list[dict[str, Any]]:
        """Every vote with the answer it is about (question, answer text, cited chunks, index version)."""
        answers: dict[str, RecordedAnswer | None] = {}
        out = []
        for vote in self.votes(since):
            if vote.answer_id not in answers:
                answers[vote.answer_id] = self.answer(vote.answer_id)
            recorded = answers[vote.answer_id]
            if recorded is None:  # pruned between the two reads
                continue
            out.append({**asdict(vote), "question": recorded.question, "answer": recorded.answer,
                        "citations": [asdict(c) for c in recorded.citations], "index_version": recorded.index_version})
        return out


def _prepare(connection: sqlite3.Connection) -> None:
    connection.execute("PRAGMA journal_mode=WAL")
    connection.execute("PRAGMA synchronous=FULL")  # a vote acknowledged is a vote kept
    connection.executescript(_SCHEMA)
    for table, columns in _ADDED_COLUMNS.items():  # columns added since the first release
        present = {row[1] for row in connection.execute(f"PRAGMA table_info({table})")}
        for name, kind in columns.items():
            if name not in present:
                connection.execute(f"ALTER TABLE {table} ADD COLUMN {name} {kind}")


def _answer(row: tuple) -> RecordedAnswer:
    answer_id, question, text, citations, version, channel, user, created, platform, scope, sources = row
    return RecordedAnswer(answer_id, question, text, [CitedChunk(**c) for c in json.loads(citations)], version,
                          channel, user, created, platform, scope,
                          None if sources is None else tuple(json.loads(sources)))


def _vote(row: tuple) -> Vote:
    answer_id, user, target, value, chunk_id, channel, updated, admin, reason, comment, platform = row
    return Vote(answer_id, user, target, value, chunk_id, channel, updated, bool(admin), reason, comment, platform)
