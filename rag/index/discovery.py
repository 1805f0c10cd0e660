"""Find the files under the indexed roots and name them by their path relative to the root."""

from __future__ import annotations

import fnmatch
import os
from dataclasses import dataclass
from pathlib import Path

from rag.access import is_sidecar
from rag.parsing.loader import is_candidate
from rag.index.metadata import DocumentMeta
from rag.types import collection_of


@dataclass(frozen=True)
class SourceFile:
    path: Path
    rel: str  # forward-slash path relative to its root (prefixed by the root's name when several)
    source: str = ""  # the declared source it belongs to (rag.sources); "" for a folder given to `index`
    collection: str = ""  # its collection: the source's, or the first folder under its own root (public)
    meta: DocumentMeta | None = None  # what the source says of the document, over the file's own metadata


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

    A file is indexed under its own path only, never under a symbolic link's name: a link is reported
    with what became of its target — outside the root, hidden or excluded (not indexed), or indexed
    under its own path, in its own collection and with its own access list. Links are not walked, so
    they cannot make loops or read what lies outside the root.
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
            _add_file(root, prefix, root.name, exclude, found, passed)
            continue
        _Walk(root, prefix, exclude, found, passed).run()
    return list(found.values()), passed


def _add_file(path: Path, prefix: str, inner: str, exclude: list[str], found: dict[str, SourceFile],
              passed: dict[str, str]) -> None:
    """`inner`: the file's path under its root, which decides its collection whatever the number of roots (so
    adding a folder never moves another's documents to another collection); `prefix`: its root's name with
    several roots."""
    rel = prefix + inner
    if any(part.startswith(".") for part in Path(rel).parts):
        return  # hidden files and folders (.git, .DS_Store…)
    if is_excluded(rel, exclude):
        return
    if is_sidecar(path):
        return  # an access list, read with its document
    if not is_candidate(path):
        passed[rel] = f"unsupported file type ({path.suffix.lower() or 'no extension'})"
        return
    found[rel] = SourceFile(path, rel, collection=collection_of(inner))


class _Walk:
    """One root's files: real folders first, then the symbolic links met on the way, judged by their targets."""

    def __init__(self, root: Path, prefix: str, exclude: list[str], found: dict[str, SourceFile],
                 passed: dict[str, str]) -> None:
        self.root = Path(os.path.realpath(root))
        self.prefix = prefix
        self.exclude = exclude
        self.found = found
        self.passed = passed
        self.folders: set[Path] = set()  # every folder walked (real paths: links are not walked)
        self.links: list[tuple[Path, str]] = []

    def run(self) -> None:
        self._walk(self.root, "")
        for link, rel in self.links:  # after the walk: a link's target is judged against all that was found
            self._follow(link, rel)

    def _inside(self, path: Path) -> bool:
        return path == self.root or self.root in path.parents

    def _walk(self, folder: Path, rel: str) -> None:
        self.folders.add(folder)
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
                _add_file(Path(entry.path), self.prefix, name, self.exclude, self.found, self.passed)

    def _follow(self, link: Path, rel: str) -> None:
        """A link is judged by its target: never indexed under its own name, so it cannot carry a hidden,
        excluded or access-listed file into another folder or collection."""
        target = Path(os.path.realpath(link))
        shown = self.prefix + rel
        if not target.exists():
            self.passed[shown] = "broken symbolic link"
            return
        kind = "folder" if target.is_dir() else "file"
        if not self._inside(target):
            self.passed[shown] = f"symbolic link to a {kind} outside the indexed folder; not indexed"
            return
        where = target.relative_to(self.root).as_posix()
        named = self.prefix + where if where != "." else "the indexed folder itself"
        # The report is posted where the link's collection is read: it names a target only of that collection
        # (a hidden or excluded one never), so a link cannot tell a channel what another collection holds.
        inner = where + "/" if kind == "folder" else where  # a folder's files are of its first folder
        told = named if where == "." or collection_of(inner) == collection_of(rel) else None
        if where != "." and _hidden(where):
            self.passed[shown] = f"symbolic link to a hidden {kind}; not indexed"
        elif where != "." and _excluded_path(self.prefix, where, self.exclude):
            self.passed[shown] = f"symbolic link to an excluded {kind}; not indexed"
        elif target in self.folders:
            self.passed[shown] = f"symbolic link to {told or 'a folder of another collection'}, indexed there"
        elif named in self.found:
            self.passed[shown] = f"same file as {told or 'a file of another collection'} (symbolic link), indexed once"
        else:  # unreadable folder, unsupported type, an access list: its own entry says why
            self.passed[shown] = f"symbolic link to {told or 'a file of another collection'}, which is not indexed"


def _hidden(rel: str) -> bool:
    return any(part.startswith(".") for part in rel.split("/"))


def _excluded_path(prefix: str, rel: str, patterns: list[str]) -> bool:
    """Excluded itself or inside an excluded folder, as the walk judges each step."""
    parts = rel.split("/")
    return any(is_excluded(prefix + "/".join(parts[: i + 1]), patterns) for i in range(len(parts)))
