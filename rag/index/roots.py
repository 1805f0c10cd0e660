"""Which folders an index covers, and what changing them would take away."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class RootsPlan:
    roots: list[Path]  # what the next build indexes
    dropped: list[Path]  # indexed roots the next build leaves out
    documents_dropped: int  # the live index's documents under those


def documents_under(files: list[str], roots: list[str], root: str) -> int:
    """How many of the indexed `files` came from `root`: with several roots a file's name starts with its
    root's name (rag.index.discovery), with one every file is that root's."""
    if len(roots) == 1:
        return len(files) if roots[0] == root else 0
    prefix = Path(root).name + "/"
    return sum(1 for f in files if f.startswith(prefix))


def plan_roots(indexed: list[str], files: list[str], paths: list[Path], add: bool) -> RootsPlan:
    """The roots for `index PATHS` on an index of `indexed`: with `add` the PATHS join them, otherwise
    they stand alone and the plan says what would go."""
    new = [p.resolve() for p in paths]
    old = [Path(r) for r in indexed]
    if add:
        return RootsPlan(old + [p for p in new if p not in old], [], 0)
    dropped = [r for r in old if r not in new]
    count = sum(documents_under(files, indexed, str(r)) for r in dropped)
    return RootsPlan(new, dropped, count)


def refiled_name(before: list[str], after: list[str]) -> Callable[[str], str | None] | None:
    """For files named under the roots `after`, their name under `before` where only the root count changed
    it (one root names its files bare, several prefix them with the root's name: rag.index.discovery)."""
    if len(before) == 1 and len(after) > 1 and before[0] in after:
        prefix = Path(before[0]).name + "/"
        return lambda new: new[len(prefix):] if new.startswith(prefix) else None
    if len(before) > 1 and len(after) == 1 and after[0] in before:
        prefix = Path(after[0]).name + "/"
        return lambda new: prefix + new
    return None


def root_of(roots: list[str], name: str) -> tuple[Path, str] | None:
    """The root an indexed file `name` is under, and its path under that root (rag.index.discovery names it
    so: bare with one root, after its root's name with several); None when no root is."""
    if len(roots) == 1:
        return Path(roots[0]), name
    first, _, inner = name.partition("/")
    root = next((Path(r) for r in roots if Path(r).name == first), None)
    return (root, inner) if root is not None else None


def indexed_paths(roots: list[str], names: list[str]) -> dict[Path, str]:
    """Where the indexed files `names` lie, resolved: each one's path -> its name."""
    found: dict[Path, str] = {}
    for name in names:
        placed = root_of(roots, name)
        if placed is not None:
            root, inner = placed
            found[(root if root.is_file() else root / inner).resolve()] = name
    return found
