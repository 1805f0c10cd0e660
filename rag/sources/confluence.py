"""The Confluence source (Cloud and Data Center): the pages of the listed spaces as Markdown under
`workdir/pages/<SPACE>/<page id>.md`, their attachments under `workdir/pages/<SPACE>/<page id>/<file>`.

A sync lists every space in full (versions, ancestors, restrictions: no bodies), then fetches the bodies of
the pages whose version changed, a batch of ids per call, and the attachments whose version changed. The
listing is finished before anything is written: a failed call raises `SourceError` and removes nothing.
A page's ancestors become its heading path, its read restrictions (and its ancestors') its access list."""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable, Mapping
from contextlib import closing
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from rag.parsing.loader import MINERU_SUFFIXES, OCR_SUFFIXES, TEXT_SUFFIXES
from rag.index.metadata import DocumentMeta
from rag.sources.base import CheckReport, Fetched, Progress, SourceError
from rag.sources.config import ConfluenceSource
from rag.sources.confluence_access import PageAccess
from rag.sources.confluence_api import ConfluenceApi, NotFound, Retry
from rag.sources.confluence_listing import ListedAttachment, ListedPage, SpaceListing, list_space
from rag.sources.confluence_storage import storage_to_markdown
from rag.sources.confluence_viewers import SpaceViewers

# Attachments the indexer reads; others are not fetched.
_PARSED = TEXT_SUFFIXES | MINERU_SUFFIXES | OCR_SUFFIXES
_UNSAFE = re.compile(r'[\x00-\x1f/\\:*?"<>|]+')


@dataclass
class _Sync:
    """One fetch in progress: what the listing found and what became of it."""

    api: ConfluenceApi
    root: Path
    state: dict[str, Any]
    access: PageAccess
    pages: dict[str, ListedPage] = field(default_factory=dict)
    attachments: list[ListedAttachment] = field(default_factory=list)
    spaces: dict[str, str] = field(default_factory=dict)  # space key -> its own collection, when the spec maps it
    viewers: dict[str, SpaceViewers] = field(default_factory=dict)  # space key -> who it lets view its pages
    fetched: Fetched = field(init=False)

    def collection(self, space: str) -> str | None:
        return self.spaces.get(space)

    def access_of(self, page: ListedPage) -> tuple[str, ...] | None:
        return self.access.of(page, self.pages, self.viewers[page.space])

    def __post_init__(self) -> None:
        self.fetched = Fetched(root=self.root)


class ConfluenceConnector:
    """`fetch` mirrors the spaces of `spec` into a folder; `check` reaches and counts them."""

    def __init__(self, spec: ConfluenceSource, env: Mapping[str, str] = os.environ, *, page_size: int = 100,
                 batch: int = 25, retry: Retry = Retry(),
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self.name = spec.name
        self.spec = spec
        self._connect = partial(ConfluenceApi, spec, env, retry, sleep)  # env, where the token is, stays in it
        self._page_size, self._batch = page_size, batch

    def __repr__(self) -> str:
        return f"ConfluenceConnector({self.name!r}, {self.spec.url!r}, spaces={self.spec.space_keys})"

    def check(self) -> CheckReport:
        """The spaces listed (no body fetched): their pages counted, each wiki group the sources file does not
        map named with the titles of the pages it keeps from its members, each space whose view permissions
        could not be read, and each space's viewers who could not be matched (no email shown)."""
        try:
            with closing(self._connect()) as api:
                listings = {space: list_space(api, space, page_size=self._page_size, attachments=False)
                            for space in self.spec.space_keys}
        except SourceError as exc:
            return CheckReport(ok=False, detail=str(exc))
        pages = {p.id: p for listing in listings.values() for p in listing.pages}
        access = PageAccess(self.spec.groups)
        for listing in listings.values():
            for page in listing.pages:
                access.of(page, pages, listing.viewers)
        listed = ", ".join(f"{space} {len(listing.pages)}" for space, listing in listings.items())
        return CheckReport(ok=True, documents=len(pages), detail=f"{self.spec.url}: pages {listed}",
                           unmapped_groups={group: tuple(sorted(pages[i].title for i in ids))
                                            for group, ids in sorted(access.hidden.items())},
                           unreadable_spaces=_unreadable(listings),
                           unmatched_users=_unmatched(listings))

    def fetch(self, workdir: Path, state: dict[str, Any], progress: Progress) -> Fetched:
        with closing(self._connect()) as api:
            return self._fetch(api, workdir, state, progress)

    def _fetch(self, api: ConfluenceApi, workdir: Path, state: dict[str, Any], progress: Progress) -> Fetched:
        sync = _Sync(api, workdir / "pages", {"pages": dict(state.get("pages", {})),
                                              "attachments": dict(state.get("attachments", {}))},
                     PageAccess(self.spec.groups),
                     spaces=dict(self.spec.spaces) if isinstance(self.spec.spaces, dict) else {})
        listings: dict[str, SpaceListing] = {}
        for space in self.spec.space_keys:
            progress(0, 0, f"listing {space}")
            listing = listings[space] = list_space(api, space, page_size=self._page_size,
                                                   attachments=self.spec.attachments)
            sync.viewers[space] = listing.viewers
            sync.pages.update((p.id, p) for p in listing.pages)
            sync.attachments += listing.attachments
        self._write_pages(sync, progress)
        if self.spec.attachments:
            self._write_attachments(sync, progress)
        _remove_unlisted(sync)
        sync.fetched.notes = _notes(sync.access, listings)
        sync.fetched.calls = api.calls
        sync.fetched.state = sync.state
        return sync.fetched

    def _write_pages(self, sync: _Sync, progress: Progress) -> None:
        known = sync.state["pages"]
        stale = [p for p in sync.pages.values()
                 if _outdated(known.get(p.id), p.version, sync.root / _page_name(p))]
        for start in range(0, len(stale), self._batch):
            progress(start, len(stale), "pages")
            batch = stale[start:start + self._batch]
            try:
                bodies = _bodies(sync.api, [p.id for p in batch])
            except SourceError as exc:
                _keep(sync, [_page_name(p) for p in batch], exc)
                continue
            for page in (p for p in batch if p.id in bodies):
                version, when, storage = bodies[page.id]
                _write(sync.root / _page_name(page), storage_to_markdown(storage, page.title).encode())
                known[page.id] = {"version": version, "when": when, "space": page.space}
                sync.fetched.changed.append(_page_name(page))
        for page in sync.pages.values():
            if (sync.root / _page_name(page)).is_file():
                sync.fetched.documents[_page_name(page)] = _page_meta(sync, page)

    def _write_attachments(self, sync: _Sync, progress: Progress) -> None:
        known = sync.state["attachments"]
        wanted = [a for a in sync.attachments
                  if a.page in sync.pages and Path(a.title).suffix.lower() in _PARSED]
        names = _attachment_names(sync, wanted)
        for i, attachment in enumerate(wanted):
            name = names[attachment.id]
            if _outdated(known.get(attachment.id), attachment.version, sync.root / name):
                progress(i, len(wanted), f"attachment {attachment.title}")
                try:  # (an error names it by id: it is shown where its page's readers may not be)
                    data = sync.api.download(attachment.download, what=f"attachment {attachment.id}")
                except SourceError as exc:
                    _keep(sync, [name], exc)  # its last good copy, listed below with its page's readers
                else:
                    _write(sync.root / name, data)
                    known[attachment.id] = {"version": attachment.version, "when": attachment.when,
                                            "name": name}
                    sync.fetched.changed.append(name)
            if (sync.root / name).is_file():
                sync.fetched.documents[name] = _attachment_meta(sync, attachment)


def _bodies(api: ConfluenceApi, ids: list[str]) -> dict[str, tuple[int, str, str]]:
    """id → (version, its date, storage body). A CQL search serves a batch in one call; a page the search
    index does not have yet (just created) is asked for by id."""
    found = api.listing("rest/api/content/search", {"cql": f"id in ({','.join(ids)})", "limit": len(ids),
                                                    "expand": "body.storage,version"}, what="page bodies")
    bodies = {str(item["id"]): _body(item) for item in found}
    for missing in (i for i in ids if i not in bodies):
        item = api.get(f"rest/api/content/{missing}", {"expand": "body.storage,version"},
                       what=f"page {missing}")
        bodies[missing] = _body(item)
    return bodies


def _page_meta(sync: _Sync, page: ListedPage) -> DocumentMeta:
    held = sync.state["pages"].get(page.id, {})  # the version the file holds (older when its update failed)
    return DocumentMeta(url=sync.api.base + page.webui, link="heading", title=page.title,
                        version=str(held.get("version", page.version)),
                        date=held.get("when", page.when) or None,
                        access=sync.access_of(page), headings=tuple(t for _, t in page.ancestors),
                        collection=sync.collection(page.space))


def _attachment_meta(sync: _Sync, attachment: ListedAttachment) -> DocumentMeta:
    page, held = sync.pages[attachment.page], sync.state["attachments"].get(attachment.id, {})
    return DocumentMeta(url=sync.api.base + attachment.download, title=attachment.title,
                        version=str(held.get("version", attachment.version)),
                        date=held.get("when", attachment.when) or None, access=sync.access_of(page),
                        headings=(*(t for _, t in page.ancestors), page.title), collection=sync.collection(page.space))


def _notes(access: PageAccess, listings: Mapping[str, SpaceListing]) -> list[str]:
    """What the sync tells of the pages its access lists keep from readers Confluence lets in: the spaces
    whose view permissions could not be read, the wiki groups the sources file does not map (pages counted,
    not named: the report may be read where they may not)."""
    notes = [f"space {space}: {why}, so no one is let in to its {_pages(len(listings[space].pages))}"
             for space, why in _unreadable(listings).items()]
    return notes + [f"the wiki group {group} is mapped to no chat group (groups: in the sources file): its "
                    f"members are let in to none of the {_pages(len(ids))} it may read"
                    for group, ids in sorted(access.hidden.items())]


def _pages(n: int) -> str:
    return f"{n} page{'' if n == 1 else 's'}"


def _unreadable(listings: Mapping[str, SpaceListing]) -> dict[str, str]:
    """Each space whose view permissions could not be read, with why."""
    return {space: listing.viewers.unreadable for space, listing in listings.items()
            if listing.viewers.unreadable}


def _unmatched(listings: Mapping[str, SpaceListing]) -> dict[str, tuple[str, ...]]:
    """Each space's viewers who cannot be matched to chat users (no email shown)."""
    return {space: listing.viewers.unmatched for space, listing in listings.items()
            if listing.viewers.unmatched}


def _outdated(held: dict | None, version: int, path: Path) -> bool:
    """Whether the copy at `path` (of the version `held` records) is not that `version`."""
    return held is None or held.get("version") != version or not path.is_file()


def _body(item: dict) -> tuple[int, str, str]:
    storage = ((item.get("body") or {}).get("storage") or {}).get("value", "")
    version = item.get("version") or {}
    return int(version.get("number", 0)), str(version.get("when", "")), str(storage)


def _page_name(page: ListedPage) -> str:
    return f"{page.space}/{page.id}.md"


def _attachment_names(sync: _Sync, attachments: list[ListedAttachment]) -> dict[str, str]:
    """A safe, unique file name per attachment: no separators or control characters, no leading dot."""
    names: dict[str, str] = {}
    taken: set[str] = set()
    for attachment in attachments:
        stem = _UNSAFE.sub("_", attachment.title).strip(" .") or attachment.id
        name = f"{sync.pages[attachment.page].space}/{attachment.page}/{stem[-150:]}"
        if name in taken:
            name = f"{sync.pages[attachment.page].space}/{attachment.page}/{attachment.id}-{stem[-150:]}"
        taken.add(name)
        names[attachment.id] = name
    return names


def _passing(exc: SourceError) -> bool:
    """A failure that spares the rest of the sync: a timeout or 5xx (tried again next sync), or a page or
    attachment deleted since the listing. A refused token stops it."""
    return exc.transient or isinstance(exc, NotFound)


def _keep(sync: _Sync, names: list[str], exc: SourceError) -> None:
    """Documents whose new copy could not be fetched: their last good copy (if any) keeps serving. Only a
    passing failure is borne so; a refused token stops the sync."""
    if not _passing(exc):
        raise exc
    for name in names:
        if (sync.root / name).is_file():
            sync.fetched.kept[name] = str(exc)


def _remove_unlisted(sync: _Sync) -> None:
    """Delete what the (complete) listing no longer has, and any file that is no document of it, so the
    folder holds exactly `documents` and nothing is indexed without its access list."""
    listed_ids = set(sync.pages) | {a.id for a in sync.attachments}
    for key in ("pages", "attachments"):
        for gone in [i for i in sync.state[key] if i not in listed_ids]:
            del sync.state[key][gone]
    keep = set(sync.fetched.documents) | set(sync.fetched.kept)
    if not sync.root.is_dir():
        return
    for path in sorted(sync.root.rglob("*"), reverse=True):
        name = path.relative_to(sync.root).as_posix()
        if path.is_file() and name not in keep:
            path.unlink()
            if not path.name.startswith("."):  # a write a crash interrupted is no document
                sync.fetched.removed.append(name)
        elif path.is_dir() and not any(path.iterdir()):
            path.rmdir()


def _write(path: Path, data: bytes) -> None:
    """Replace the file whole, so a crash leaves the old copy or the new one, never half of one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.partial")
    partial.write_bytes(data)
    partial.replace(path)
