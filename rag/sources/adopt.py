"""Moving from `ai-employee index PATH` to a sources file: the indexed folders become folder sources that read
the same files where they lie, each document in the collection it is in now, so the first sync renames
documents (`<source>/<path>`) and deletes nothing (rag.index.builder takes them over)."""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import yaml

from rag.index.roots import root_of
from rag.index.snapshot import Manifest
from rag.sources.config import SourcesFileError, parse_sources
from rag.types import PUBLIC

_GLOB = re.compile(r"[*?\[]")


def adopted_sources(manifest: Manifest, declared: Iterable[str]) -> list[dict[str, Any]]:
    """Folder sources (as the sources file writes them) reading every document `ai-employee index` indexed,
    each in its collection: one a root, or, for a root whose first folders are collections of their own,
    one for its own files and one for each such folder. `declared`: the source names already taken."""
    taken = set(declared)
    by_root: dict[Path, dict[str, str]] = {}  # root -> first folder ("": the root's own files) -> collection
    for name, record in manifest.files.items():
        placed = None if record.source else root_of(manifest.roots, name)
        if placed is None:
            continue
        root, inner = placed
        if root.is_file():
            raise ValueError(f"{root} was indexed as a file of its own: declare its folder as a source by hand")
        folder = inner.split("/")[0] if "/" in inner else ""
        collections = by_root.setdefault(root, {})
        collection = manifest.collection(name)
        if collections.setdefault(folder, collection) != collection:
            raise ValueError(f"the documents of {root / folder} are in several collections; declare it by hand")
    entries = []
    for root, collections in by_root.items():
        if len(set(collections.values())) == 1:
            entries.append(_entry(root, _name(root.name, taken), next(iter(collections.values())),
                                  _excludes(manifest, root, "")))
            continue
        own = collections.get("", PUBLIC)
        apart = sorted(folder for folder, collection in collections.items() if folder and collection != own)
        if "" in collections or len(apart) < len(collections):
            entries.append(_entry(root, _name(root.name, taken), own, _excludes(manifest, root, "") + apart))
        for folder in apart:
            entries.append(_entry(root / folder, _name(f"{root.name}-{folder}", taken), collections[folder],
                                  _excludes(manifest, root, folder + "/")))
    return entries


def _entry(path: Path, name: str, collection: str, exclude: list[str]) -> dict[str, Any]:
    entry: dict[str, Any] = {"name": name, "type": "folder", "path": str(path)}
    if collection != PUBLIC:
        entry["collection"] = collection
    if exclude:
        entry["exclude"] = exclude
    return entry


def _name(wanted: str, taken: set[str]) -> str:
    """A source name (rag.sources.config) like `wanted`, not yet `taken` (which it joins)."""
    base = re.sub(r"[^a-z0-9_-]+", "-", wanted.lower()).strip("-_")[:40] or "folder"
    name, n = base, 1
    while name in taken:
        n += 1
        name = f"{base}-{n}"
    taken.add(name)
    return name


def _excludes(manifest: Manifest, root: Path, folder: str) -> list[str]:
    """The index's exclude patterns as a folder source at `root`/`folder` reads them (relative to it)."""
    prefix = (f"{root.name}/" if len(manifest.roots) > 1 else "") + folder
    kept = []
    for pattern in (p.strip("/") for p in manifest.exclude):
        if pattern.startswith(prefix):
            kept.append(pattern[len(prefix):])
        elif "/" not in pattern and _GLOB.search(pattern):
            kept.append(pattern)  # a name pattern, e.g. *.tmp: anywhere
    return [p for p in kept if p]


def with_sources(text: str, entries: list[dict[str, Any]], where: str) -> str:
    """The sources file `text` with `entries` added at the end of its `sources` list, its own lines (and
    comments) kept; SourcesFileError when the file cannot take them so (its list is not the last thing in it,
    or is written in flow style): then they are added by hand."""
    data = yaml.safe_load(text) if text.strip() else None
    before = parse_sources(data, where) if data is not None else []  # a file of comments alone: no sources
    body = text if not text or text.endswith("\n") else text + "\n"
    lines = "".join(f"  - {entry_line(entry)}\n" for entry in entries)
    after_text = body + ("" if data is not None else "sources:\n") + lines
    try:
        after = parse_sources(yaml.safe_load(after_text), where)
    except (SourcesFileError, yaml.YAMLError):
        after = []
    wanted = [s.name for s in before] + [e["name"] for e in entries]
    if [s.name for s in after] != wanted:
        raise SourcesFileError(f"{where}: its `sources` list cannot be extended at its end")
    return after_text


def entry_line(entry: dict[str, Any]) -> str:
    """One source as a line of the sources file, in the README's flow style."""
    return yaml.safe_dump(entry, default_flow_style=True, sort_keys=False, allow_unicode=True, width=1 << 20).strip()


def replace_text(file: Path, text: str) -> None:
    """Write `file` whole or not at all (a crash leaves the old one)."""
    fd, tmp = tempfile.mkstemp(dir=file.parent, prefix=f".{file.name}.", suffix=".tmp")
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(text)
    os.replace(tmp, file)
