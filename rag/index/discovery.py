"""Find the files under the indexed roots and name them by their path relative to the root."""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass
from pathlib import Path

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
    """Candidate files in a stable order, and files passed over with the reason."""
    for root in roots:
        if not root.exists():
            raise FileNotFoundError(f"no such file or folder: {root}")
    multi = len(roots) > 1
    found: dict[str, SourceFile] = {}
    passed: dict[str, str] = {}
    for root in roots:
        prefix = f"{root.name}/" if multi else ""
        paths = [root] if root.is_file() else sorted(p for p in root.rglob("*") if p.is_file())
        for path in paths:
            rel = prefix + (path.name if root.is_file() else path.relative_to(root).as_posix())
            if any(part.startswith(".") for part in Path(rel).parts):
                continue  # hidden files and folders (.git, .DS_Store…)
            if is_excluded(rel, exclude):
                continue
            if not is_candidate(path):
                passed[rel] = f"unsupported file type ({path.suffix.lower() or 'no extension'})"
                continue
            found[rel] = SourceFile(path, rel)
    return list(found.values()), passed
