"""Who may read a document: its collection (the first folder under the indexed root) and its access list
(Markdown front matter `access: [U123, S0ENGGROUP]`, or for any format a `<file>.access` sidecar with one id
a line). A document with an access list is quoted only in a direct message to someone on it."""

from __future__ import annotations

import errno
import re
from pathlib import Path


SIDECAR_SUFFIX = ".access"
# An access list that names nobody (`access: []`) still restricts: this id matches no user or group.
NOBODY = "-"
MAX_IDS, MAX_ID_CHARS = 1024, 256  # what a Milvus index holds per document (rag/index/milvus_schema.py)
_ID = re.compile(r"[^\s,\[\]'\"#]+")


def parse_ids(text: str) -> tuple[str, ...]:
    """Ids from `[U1, S2]`, `U1, S2` or one a line (`#` starts a comment), lower-cased (Slack writes ids
    upper-case, Teams' object ids come either way); order kept, repeats dropped. Raises ValueError for a
    list the index cannot hold."""
    found: list[str] = []
    for line in text.splitlines() or [text]:
        found.extend(i.lower() for i in _ID.findall(line.split("#", 1)[0]))
    ids = tuple(dict.fromkeys(found)) or (NOBODY,)
    if len(ids) > MAX_IDS or max(len(i) for i in ids) > MAX_ID_CHARS:
        raise ValueError(f"access list too long (at most {MAX_IDS} ids of at most {MAX_ID_CHARS} characters)")
    return ids


def sidecar_of(path: Path) -> Path:
    return path.with_name(path.name + SIDECAR_SUFFIX)


def is_sidecar(path: Path) -> bool:
    """An access list beside the document it belongs to (not a document itself)."""
    return path.name.endswith(SIDECAR_SUFFIX) and path.with_name(path.name[: -len(SIDECAR_SUFFIX)]).exists()


def read_sidecar(path: Path) -> bytes | None:
    """The raw access list beside `path`, None when there is none."""
    try:
        return sidecar_of(path).read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno == errno.ENAMETOOLONG:  # the document's name leaves no room for a sidecar's: none exists
            return None
        raise


def merge_access(*lists: tuple[str, ...]) -> tuple[str, ...]:
    """Everyone named in any of the lists (front matter and sidecar); no list at all stays ()."""
    named = [i for ids in lists for i in ids if i != NOBODY]
    if not named:
        return (NOBODY,) if any(lists) else ()
    return tuple(dict.fromkeys(named))
