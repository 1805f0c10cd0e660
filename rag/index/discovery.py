"""Find the files under the indexed roots and name them by their path relative to the root."""

from __future__ import annotations

import fnmatch
import os
from dataclasses import dataclass
from pathlib import Path

from rag.access import is_sidecar
from rag.parsing.loader import is_candidate


@dataclass(frozen=True)
class SourceFile:
    path: Path
    rel: str  # forward-slash path relative to its root (prefixed by the root's name when several)


def read_exclude_file(path: Path) -> list[str]:
    """Paths or glob patterns, one per line, relative to the indexed root; `#` starts a comment."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise ValueError(f"cannot read exclude file {path}: {exc.strerror}") from None
    return [line.strip() for line in lines if line.strip() and not line.strip().startswith("#")]


def is_excluded(rel: str, patterns: list[str]) -> bool:
    for pattern in patterns:
        pattern = pattern.strip("/")
        if rel == pattern or rel.startswith(pattern + "/") or fnmatch.fnmatchcase(rel, pattern):
            return True
    return False


def discover(roots: list[Path], exclude: list[str]) -> tuple[list[SourceFile], dict[str, str]]:
    """Candidate files in a stable order, and files passed over with the reason.

    Symbolic links are followed only within their root: a link to a file or folder outside it is
    reported and skipped (indexing a folder never reads what lies outside it). A file reached by
    several paths is indexed once, under its own path when that is inside the root; a link to a folder
    already walked is not walked again, so links cannot make loops.
    """
    for root in roots:
        if not root.exists():
            raise FileNotFoundError(f"no such file or folder: {root}")
    multi = len(roots) > 1
    found: dict[str, SourceFile] = {}
    passed: dict[str, str] = {}
    for root in roots:
        prefix = f"{root.name}/" if multi else ""
        if root.is_file():
            _add_file(root, prefix + root.name, exclude, found, passed)
            continue
        _Walk(root, prefix, exclude, found, passed).run()
    return list(found.values()), passed


def _add_file(path: Path, rel: str, exclude: list[str], found: dict[str, SourceFile], passed: dict[str, str]) -> None:
    if any(part.startswith(".") for part in Path(rel).parts):
        return  # hidden files and folders (.git, .DS_Store…)
    if is_excluded(rel, exclude):
        return
    if is_sidecar(path):
        return  # an access list, read with its document
    if not is_candidate(path):
        passed[rel] = f"unsupported file type ({path.suffix.lower() or 'no extension'})"
        return
    found[rel] = SourceFile(path, rel)


class _Walk:
    """One root's files: real folders first, then the symbolic links met on the way."""

    def __init__(self, root: Path, prefix: str, exclude: list[str], found: dict[str, SourceFile],
                 passed: dict[str, str]) -> None:
        self.root = Path(os.path.realpath(root))
        self.prefix = prefix
        self.exclude = exclude
        self.found = found
        self.passed = passed
        self.files: dict[Path, str] = {}  # real path → the name it is indexed under
        self.folders: dict[Path, str] = {}  # real path of every folder walked → its name
        self.links: list[tuple[Path, str]] = []

    def run(self) -> None:
        self._walk(self.root, "")
        while self.links:  # links found while following links are queued too
            link, rel = self.links.pop(0)
            self._follow(link, rel)

    def _inside(self, path: Path) -> bool:
        return path == self.root or self.root in path.parents

    def _walk(self, folder: Path, rel: str) -> None:
        self.folders[Path(os.path.realpath(folder))] = rel
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError as exc:
            self.passed[self.prefix + (rel or ".")] = f"unreadable folder: {exc.strerror}"
            return
        for entry in entries:
            name = f"{rel}/{entry.name}" if rel else entry.name
            if entry.name.startswith(".") or is_excluded(self.prefix + name, self.exclude):
                continue
            if entry.is_symlink():
                self.links.append((Path(entry.path), name))
            elif entry.is_dir(follow_symlinks=False):
                self._walk(Path(entry.path), name)
            elif entry.is_file(follow_symlinks=False):
                self._add(Path(entry.path), name)

    def _add(self, path: Path, rel: str) -> None:
        real = Path(os.path.realpath(path))
        if real in self.files:
            self.passed[self.prefix + rel] = f"same file as {self.prefix + self.files[real]} (symbolic link), indexed once"
            return
        self.files[real] = rel
        _add_file(real, self.prefix + rel, self.exclude, self.found, self.passed)

    def _follow(self, link: Path, rel: str) -> None:
        target = Path(os.path.realpath(link))
        shown = self.prefix + rel
        if not target.exists():
            self.passed[shown] = "broken symbolic link"
        elif not self._inside(target):
            kind = "folder" if target.is_dir() else "file"
            self.passed[shown] = f"symbolic link to a {kind} outside the indexed folder; not indexed"
        elif target.is_dir():
            if target in self.folders:
                where = self.prefix + self.folders[target] if self.folders[target] else "the indexed folder itself"
                self.passed[shown] = f"symbolic link to {where}, indexed there"
            else:
                self._walk(target, rel)
        elif target.is_file():
            self._add(target, rel)
