"""Which indexed documents a scope may read, for what chat shows outside answers: the passage behind
"Show source", the folders, titles and example questions of the Home tab, the collections `/scope` lists.
Every passage of a document shares its collection and access list, so one passage per file tells."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace

from rag.index.snapshot import Manifest
from rag.types import Chunk, Scope, collection_of

Documents = Mapping[str, Chunk]  # file -> one of its passages


class Catalog:
    """The live index's documents, read once per index version (call off the event loop)."""

    def __init__(self, load: Callable[[], tuple[str, Iterable[Chunk]] | None]) -> None:
        self._load = load  # (version, every passage) of the live index; None or an error: no index
        self._lock = threading.Lock()
        self._version: str | None = None
        self._documents: dict[str, Chunk] = {}

    def documents(self) -> Documents | None:
        try:
            live = self._load()
        except Exception:  # noqa: BLE001 - no index yet, or one that cannot be read: nothing to show
            return None
        if live is None:
            return None
        version, chunks = live
        with self._lock:
            if version != self._version:
                self._documents = {chunk.file: chunk for chunk in chunks}
                self._version = version
            return self._documents


def readable(documents: Documents, scope: Scope) -> set[str]:
    return {file for file, chunk in documents.items() if scope.allows(chunk)}


def readable_manifest(manifest: Manifest, documents: Documents | None, scope: Scope) -> Manifest:
    """The manifest listing only what `scope` may read (nothing when the documents are not known)."""
    allowed = readable(documents, scope) if documents is not None else set()
    files = {name: record for name, record in manifest.files.items() if name in allowed}
    return replace(manifest, files=files, chunk_count=sum(r.chunks for r in files.values()))


def collection_sizes(documents: Documents) -> dict[str, int]:
    """Collection -> how many documents it holds, by name."""
    return dict(sorted(Counter(chunk.collection for chunk in documents.values()).items()))


def may_show(documents: Documents | None, scope: Scope, file: str, where_answered: bool) -> bool:
    """Whether a passage of `file` cited in an answer may be shown to `scope`: as the live index says the
    document may be read; a document no longer indexed only where the answer was given (it showed there)."""
    chunk = documents.get(file) if documents is not None else None
    if chunk is None:
        return where_answered
    return scope.allows(chunk)


def visible_files(documents: Documents | None, scope: Scope,
                  collection: Callable[[str], str] | None = None) -> Callable[[str], bool]:
    """Whether a file's name may be shown to `scope` (a reindex report): a document of the live index when
    `scope` may read it; a file the index does not hold (removed, skipped) when its collection is one of the
    scope's. Such a file's access list is no longer known, so a removed access-listed document's name may
    still show in a channel of its collection: a name only, never its text. `collection`: a file's collection
    as the manifest knows it (a declared source's, Manifest.collection); else by its first folder."""
    known = documents or {}
    collection = collection or collection_of

    def visible(file: str) -> bool:
        chunk = known.get(file)
        if chunk is not None:
            return scope.allows(chunk)
        return scope.collections is None or collection(file) in scope.collections

    return visible
