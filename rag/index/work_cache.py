"""Persistent cache of work derived from chunk text, keyed by text hash: embeddings per model and
BM25 tokens per tokenizer. Unchanged text is never embedded or tokenized twice, and vectors are
committed batch by batch, so an interrupted indexing run resumes where it stopped.
"""

from __future__ import annotations

import hashlib
import sqlite3
import threading
from collections.abc import Iterable
from pathlib import Path

import numpy as np

from rag.storage import Database, Stored


_TOKEN_SEP = "\x1f"


def text_key(text: str) -> bytes:
    return hashlib.sha256(text.encode("utf-8")).digest()[:16]


class WorkCache(Stored):
    def __init__(self, path: Path) -> None:
        self.path = path
        self._db = Database(path, _prepare)  # on a full disk: read-only
        self._lock = threading.Lock()

    def get_vectors(self, model: str, keys: Iterable[bytes]) -> dict[bytes, np.ndarray]:
        return {
            key: np.frombuffer(blob, dtype=np.float32)
            for key, blob in self._select("SELECT key, vector FROM embeddings WHERE model = ?", model, keys)
        }

    def put_vectors(self, model: str, keys: list[bytes], vectors: np.ndarray) -> None:
        vectors = np.asarray(vectors, dtype=np.float32)
        rows = [(model, key, vectors.shape[1], vectors[i].tobytes()) for i, key in enumerate(keys)]
        self._write("INSERT OR REPLACE INTO embeddings VALUES (?, ?, ?, ?)", rows)

    def get_tokens(self, tokenizer: str, keys: Iterable[bytes]) -> dict[bytes, list[str]]:
        return {
            key: text.split(_TOKEN_SEP) if text else []
            for key, text in self._select("SELECT key, tokens FROM tokens WHERE tokenizer = ?", tokenizer, keys)
        }

    def put_tokens(self, tokenizer: str, keys: list[bytes], tokens: list[list[str]]) -> None:
        rows = [(tokenizer, key, _TOKEN_SEP.join(toks)) for key, toks in zip(keys, tokens)]
        self._write("INSERT OR REPLACE INTO tokens VALUES (?, ?, ?)", rows)

    def _select(self, sql: str, producer: str, keys: Iterable[bytes]) -> list[tuple[bytes, object]]:
        wanted = list(dict.fromkeys(keys))
        rows: list[tuple[bytes, object]] = []
        with self._lock:
            for i in range(0, len(wanted), 500):
                part = wanted[i : i + 500]
                marks = ",".join("?" * len(part))
                rows.extend(self._conn.execute(f"{sql} AND key IN ({marks})", (producer, *part)))
        return rows

    def _write(self, sql: str, rows: list[tuple[object, ...]]) -> None:
        """DiskFull when the disk has no room for `rows`."""
        with self._lock, self._db.writing():
            self._conn.execute("BEGIN")
            try:
                self._conn.executemany(sql, rows)
                self._conn.execute("COMMIT")
            except BaseException:
                if self._conn.in_transaction:
                    self._conn.execute("ROLLBACK")
                raise

    def count(self, model: str | None = None) -> int:
        with self._lock:
            if model is None:
                return self._conn.execute("SELECT COUNT(*) FROM embeddings").fetchone()[0]
            return self._conn.execute("SELECT COUNT(*) FROM embeddings WHERE model = ?", (model,)).fetchone()[0]


def _prepare(connection: sqlite3.Connection) -> None:
    connection.execute("PRAGMA journal_mode=WAL")
    connection.execute("PRAGMA synchronous=NORMAL")
    connection.execute(
        "CREATE TABLE IF NOT EXISTS embeddings ("
        " model TEXT NOT NULL, key BLOB NOT NULL, dim INTEGER NOT NULL, vector BLOB NOT NULL,"
        " PRIMARY KEY (model, key)) WITHOUT ROWID"
    )
    connection.execute(
        "CREATE TABLE IF NOT EXISTS tokens ("
        " tokenizer TEXT NOT NULL, key BLOB NOT NULL, tokens TEXT NOT NULL,"
        " PRIMARY KEY (tokenizer, key)) WITHOUT ROWID"
    )
