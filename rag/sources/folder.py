"""A folder on disk (or a mounted share) as a source: indexed where it lies, nothing copied."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from rag.index.discovery import discover
from rag.sources.base import CheckReport, Fetched, Progress, SourceError
from rag.sources.config import FolderSource


class FolderConnector:
    def __init__(self, spec: FolderSource) -> None:
        self.spec = spec
        self.name = spec.name

    def _root(self) -> Path:
        root = self.spec.path.expanduser()
        if not root.is_dir() or not os.access(root, os.R_OK | os.X_OK):
            # An unmounted share looks like an empty folder to nobody but us: never a reason to delete.
            raise SourceError(f"the folder {root} of source {self.name} is missing or unreadable; its last "
                              "indexed documents keep serving")
        return root.resolve()

    def fetch(self, workdir: Path, state: dict[str, Any], progress: Progress) -> Fetched:
        """The folder itself: the indexer reads it where it lies (its `url` template links every file)."""
        return Fetched(root=self._root())

    def check(self) -> CheckReport:
        try:
            root = self._root()
        except SourceError as exc:
            return CheckReport(False, detail=str(exc))
        files, _ = discover([root], list(self.spec.exclude))
        return CheckReport(True, len(files), f"{root}: {len(files)} documents")
