"""Durable feedback on answers and citations (SQLite), and the retrieval adjustment it drives.

Every answer shown to a user is recorded with its question, text, cited chunk ids, index version
and the question's embedding, and kept for a retention period (`AIE_FEEDBACK_RETENTION_DAYS`, 180
days by default): older answers and their votes are pruned when the store opens and then at most once
an hour, in small batches so a vote never waits long. Votes are 👍/👎 on the answer, or "wrong source" on one citation; a
user voting again on the same target changes their vote instead of adding one. Chunks that were
voted down for a question demote themselves for *similar* questions (by embedding similarity).
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

ANSWER = "answer"
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

    @property
    def chunk_ids(self) -> list[str]:
        return [c.chunk_id for c in self.citations]


@dataclass(frozen=True)
class Vote:
    answer_id: str
    user: str
    target: str  # "answer" or "citation:<marker>"
    value: int  # +1 or -1
    chunk_id: str | None
    channel: str
    updated: float


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
"""


class FeedbackStore:
    def __init__(self, path: Path, retention_days: float = 180, clock: Callable[[], float] = time.time) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.retention_days = retention_days  # 0 or less: keep everything
        self._clock = clock
        self._conn = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute("PRAGMA synchronous=FULL")  # a vote acknowledged is a vote kept
        self._conn.executescript(_SCHEMA)
        self._conn.execute("CREATE INDEX IF NOT EXISTS answers_created ON answers (created)")
        self._lock = threading.Lock()
        self._prune_lock = threading.Lock()
        self.version = 0  # bumped on every vote, so readers know to refresh
        self._last_prune = self._clock()
        self.prune()

    def record_answer(
        self, question: str, answer: str, citations: list[CitedChunk], index_version: str, channel: str, user: str,
        question_vector: np.ndarray | None = None,
    ) -> str:
        answer_id = uuid.uuid4().hex
        blob = None if question_vector is None else np.asarray(question_vector, dtype=np.float32).tobytes()
        cited = json.dumps([asdict(c) for c in citations], ensure_ascii=False)
        with self._lock:
            self._conn.execute(
                "INSERT INTO answers VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (answer_id, question, answer, cited, index_version, channel, user, self._clock(), blob),
            )
        if self._clock() - self._last_prune >= PRUNE_EVERY_SECONDS:
            self._last_prune = self._clock()
            self.prune()
        return answer_id

    def prune(self) -> int:
        """Delete answers older than the retention period, with their votes; returns how many answers went.

        Runs in batches, each its own short transaction, so votes recorded meanwhile are not held up.
        """
        if self.retention_days <= 0 or not self._prune_lock.acquire(blocking=False):
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
                        self.version += 1  # demotions learned from those votes are gone too
                removed += len(ids)
                if len(ids) < _PRUNE_BATCH:
                    return removed
        finally:
            self._prune_lock.release()

    def answer(self, answer_id: str) -> RecordedAnswer | None:
        with self._lock:
            row = self._conn.execute(
                "SELECT answer_id, question, answer, citations, index_version, channel, user, created "
                "FROM answers WHERE answer_id = ?", (answer_id,)).fetchone()
        if row is None:
            return None
        return RecordedAnswer(*row[:3], [CitedChunk(**c) for c in json.loads(row[3])], *row[4:])

    def vote(self, answer_id: str, user: str, target: str, value: int, channel: str) -> bool:
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
        with self._lock:
            existed = self._conn.execute(
                "SELECT 1 FROM votes WHERE answer_id = ? AND user = ? AND target = ?", (answer_id, user, target)
            ).fetchone()
            self._conn.execute(
                "INSERT INTO votes VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (answer_id, user, target) "
                "DO UPDATE SET value = excluded.value, updated = excluded.updated, channel = excluded.channel",
                (answer_id, user, target, value, chunk_id, channel, time.time()),
            )
            self.version += 1
        return existed is None

    def votes(self) -> list[Vote]:
        with self._lock:
            rows = self._conn.execute(
                "SELECT answer_id, user, target, value, chunk_id, channel, updated FROM votes ORDER BY updated"
            ).fetchall()
        return [Vote(*row) for row in rows]

    def export(self) -> list[dict[str, Any]]:
        """Every vote with the answer it is about (question, answer text, cited chunks, index version)."""
        answers: dict[str, RecordedAnswer] = {}
        out = []
        for vote in self.votes():
            if vote.answer_id not in answers:
                answers[vote.answer_id] = self.answer(vote.answer_id)  # type: ignore[assignment]
            recorded = answers[vote.answer_id]
            out.append({**asdict(vote), "question": recorded.question, "answer": recorded.answer,
                        "citations": [asdict(c) for c in recorded.citations], "index_version": recorded.index_version})
        return out

    def negative_examples(self) -> list[tuple[str, np.ndarray, float]]:
        """(chunk id, question vector, weight) for every net down-vote: a wrong-source vote weighs 1,
        a 👎 on the whole answer 0.5 for each chunk it cited (up-votes on the answer cancel those)."""
        with self._lock:
            rows = self._conn.execute(
                "SELECT v.target, v.chunk_id, SUM(v.value), a.citations, a.question_vector FROM votes v "
                "JOIN answers a USING (answer_id) WHERE a.question_vector IS NOT NULL "
                "GROUP BY v.answer_id, v.target"
            ).fetchall()
        examples = []
        for target, chunk_id, total, citations, blob in rows:
            if total >= 0:
                continue
            vector = np.frombuffer(blob, dtype=np.float32)
            if target == ANSWER:
                examples.extend((c["chunk_id"], vector, 0.5 * -total) for c in json.loads(citations))
            else:
                examples.append((chunk_id, vector, float(-total)))
        return examples

    def summary(self, limit: int = 10) -> dict[str, list[dict[str, Any]]]:
        """The most down-voted documents and citations: a 👎 on an answer counts against every chunk it
        cited, a "wrong source" vote against that one chunk."""
        by_file: Counter[str] = Counter()
        by_chunk: Counter[str] = Counter()
        where: dict[str, CitedChunk] = {}
        for row in self.export():
            if row["value"] >= 0:
                continue
            cited = [CitedChunk(**c) for c in row["citations"]]
            if row["chunk_id"]:
                cited = [c for c in cited if c.chunk_id == row["chunk_id"]]
            for c in cited:
                where[c.chunk_id] = c
                by_chunk[c.chunk_id] += 1
            by_file.update({c.file for c in cited})
        return {
            "documents": [{"file": f, "down_votes": n} for f, n in by_file.most_common(limit)],
            "citations": [{"chunk_id": c, "file": where[c].file, "location": where[c].location, "down_votes": n}
                          for c, n in by_chunk.most_common(limit)],
        }

    def close(self) -> None:
        with self._lock:
            self._conn.close()


class FeedbackAdjuster:
    """Demotes chunks that users flagged for questions similar to the one being answered."""

    def __init__(self, store: FeedbackStore, similarity: float = 0.88, penalty: float = 0.5) -> None:
        self.store = store
        self.similarity = similarity
        self.penalty = penalty
        self._seen_version = -1
        self._examples: list[tuple[str, np.ndarray, float]] = []

    def _refresh(self) -> None:
        if self._seen_version != self.store.version:
            self._examples = self.store.negative_examples()
            self._seen_version = self.store.version

    def demotions(self, question_vector: np.ndarray) -> dict[str, float]:
        """chunk id → score multiplier (< 1) for this question."""
        self._refresh()
        factors: dict[str, float] = {}
        q = np.asarray(question_vector, dtype=np.float32)
        for chunk_id, vector, weight in self._examples:
            if len(vector) == len(q) and float(vector @ q) >= self.similarity:
                factors[chunk_id] = factors.get(chunk_id, 1.0) * (self.penalty ** weight)
        return factors
