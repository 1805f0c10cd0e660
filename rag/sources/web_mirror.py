"""The folder a web source keeps its pages in, and the names they get there.

A page's name is read from its URL below the source's folder (`…/policies/travel/per-diem.html` →
`travel/per-diem.md`): lower-case ASCII letters, digits, `-` and `_`, folders without dots (so a folder
can never be named like a file), no name any system reserves, every part and the whole name short. A
name that lost something on the way (cut short, letters dropped) or that another URL already has ends
with a hash of the URL, so it stays unique and the same on every run. Files are written whole (to a
hidden temporary file, then renamed) so the indexer never reads half a page.
"""

from __future__ import annotations

import hashlib
import os
import re
import unicodedata
from pathlib import Path
from urllib.parse import unquote

from rag.sources.web_urls import CrawlBounds

_UNSAFE = re.compile(r"[^a-z0-9_-]+")
_PAGE_SUFFIXES = re.compile(r"\.(html?|xhtml|shtml|php\d?|aspx?|jsp|cfm|cgi)$", re.IGNORECASE)
_RESERVED = {"con", "prn", "aux", "nul", *(f"com{i}" for i in range(10)), *(f"lpt{i}" for i in range(10))}
MAX_PART = 64
MAX_DEPTH = 6
MAX_NAME = 160


def _hash(url: str) -> str:
    return hashlib.sha256(url.encode("utf-8")).hexdigest()[:10]


def _slug(part: str) -> str:
    """`part` in lower-case ASCII letters, digits, `-` and `_` (accents dropped, anything else a `-`)."""
    ascii_part = unicodedata.normalize("NFKD", part).encode("ascii", "ignore").decode("ascii").lower()
    return _UNSAFE.sub("-", ascii_part).strip("-_")


def readable_name(url: str, bounds: CrawlBounds, suffix: str) -> str:
    """The name `url` gets in the mirror before uniqueness is checked (`suffix`: ".md", ".pdf"…)."""
    path, _, query = bounds.relative(url).partition("?")
    parts = [p for p in unquote(path).split("/") if p not in ("", ".", "..")]
    if not parts or path.endswith("/"):
        parts.append("index")
    last = _PAGE_SUFFIXES.sub("", parts[-1])
    if last.lower().endswith(suffix):
        last = last[: -len(suffix)]
    parts[-1] = last + ("-" + unquote(query) if query else "")
    slugs = [_slug(p) for p in parts]
    cut = len(slugs) > MAX_DEPTH or any(len(s) > MAX_PART or not s for s in slugs)
    if len(slugs) > MAX_DEPTH:
        slugs = slugs[: MAX_DEPTH - 1] + slugs[-1:]
    slugs = [s[:MAX_PART].strip("-_") or "page" for s in slugs]
    name = "/".join(s + "-" if s in _RESERVED else s for s in slugs)
    if len(name) + len(suffix) > MAX_NAME:
        name, cut = name[: MAX_NAME - len(suffix)].rstrip("/-_"), True
    if cut:  # what was cut away may be all that tells two URLs apart
        name = f"{name[: MAX_NAME - len(suffix) - 11]}-{_hash(url)}"
    return name + suffix


class Mirror:
    """The pages folder of one web source."""

    def __init__(self, root: Path) -> None:
        self.root = root
        root.mkdir(parents=True, exist_ok=True)
        self._resolved = root.resolve()

    def unique_name(self, url: str, bounds: CrawlBounds, suffix: str, taken: set[str]) -> str:
        """A name for `url` that none of `taken` (lower-cased names) has, even on a case-blind file system."""
        name = readable_name(url, bounds, suffix)
        if name.lower() in taken:
            stem = name[: -len(suffix)]
            name = f"{stem}-{_hash(url)}{suffix}"
            if name.lower() in taken:
                name = f"{stem}-{hashlib.sha256(url.encode()).hexdigest()[:24]}{suffix}"
        return name

    def path(self, name: str) -> Path:
        """Where `name` lives; a name that would lead outside the folder is refused (ValueError)."""
        target = (self.root / name).resolve()
        if target == self._resolved or not target.is_relative_to(self._resolved):
            raise ValueError(f"{name!r} is not a name inside the mirror")
        return target

    def names(self) -> list[str]:
        """The names of the files in the folder (not the hidden ones, such as a write left half done)."""
        return sorted(p.relative_to(self.root).as_posix() for p in self.root.rglob("*")
                      if p.is_file() and not any(part.startswith(".") for part in p.relative_to(self.root).parts))

    def has(self, name: str) -> bool:
        return self.path(name).is_file()

    def write(self, name: str, data: bytes, mtime: float | None = None) -> None:
        target = self.path(name)
        target.parent.mkdir(parents=True, exist_ok=True)
        temporary = target.with_name(f".{target.name}.partial")
        temporary.write_bytes(data)
        if mtime is not None:
            os.utime(temporary, (mtime, mtime))
        os.replace(temporary, target)

    def delete(self, name: str) -> None:
        target = self.path(name)
        target.unlink(missing_ok=True)
        folder = target.parent
        while folder != self._resolved and folder.is_relative_to(self._resolved):
            try:
                folder.rmdir()  # only when empty
            except OSError:
                break
            folder = folder.parent
