"""The version of the code that answers: a digest of rag's own files (its modules and the data files beside
them), so that what was cached from one version of the code — the candidates found for a question, a
question's rewrite — is never served by another. Replicas sharing Redis across an upgrade then each read
the cache of their own version; no cache key is bumped by hand.
"""

from __future__ import annotations

import hashlib
from functools import cache
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent
SUFFIXES = (".py", ".json", ".txt", ".tsv")  # the code and the data it reads (word lists, calibrations)


def digest_of(root: Path) -> str:
    """A short digest of every file under `root` with one of SUFFIXES: its path below `root` and its bytes."""
    hasher = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_file() and p.suffix in SUFFIXES
                       and "__pycache__" not in p.parts):
        hasher.update(path.relative_to(root).as_posix().encode() + b"\0")
        hasher.update(hashlib.sha256(path.read_bytes()).digest())
    return hasher.hexdigest()[:16]


@cache
def code_version() -> str:
    """This installation's rag code, read once per process."""
    return digest_of(PACKAGE)
