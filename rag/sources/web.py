"""The web source (`type: web`): the pages of a site under one URL prefix, kept as files for the indexer.

A fetch reads robots.txt (and keeps to it), takes the pages the sitemaps list or else follows links
breadth-first from the source's url, up to `max_pages`, one request at a time, `delay` seconds apart
(or the site's Crawl-delay when longer). A page's main content is written as Markdown under
`pages/` (a PDF or an Office file as itself), with its URL, title and date as its metadata.

Re-syncs are conditional GETs with the stored ETag and Last-Modified: a 304, or a body that hashes the
same, writes nothing. A page that answers 404 or 410 is removed; one that fails otherwise (a 5xx, a
timeout, a 429) keeps its last good copy, and so does one the crawl no longer reaches (cut short, no
longer linked) unless asking for it directly says it is gone.
"""

from __future__ import annotations

import hashlib
import os
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field, replace
from email.utils import parsedate_to_datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx

from rag.parsing.metadata import normalize_date
from rag.index.metadata import DocumentMeta
from rag.sources.base import CheckReport, Fetched, Progress, SourceError
from rag.sources.config import WebSource
from rag.sources.web_http import (DEADLINE, HTML, MAX_HTML_BYTES, TIMEOUT, USER_AGENT, Answer, Fetcher, Unreachable,
                                  shown)
from rag.sources.web_mirror import Mirror
from rag.sources.web_reader import EXTRACT_SECONDS, PageReader, TooSlow
from rag.sources.web_site import GONE, Reached, Site
from rag.sources.web_urls import CrawlBounds

STATE_VERSION = 1
_FILES = {
    "application/pdf": ".pdf",
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document": ".docx",
    "application/vnd.openxmlformats-officedocument.presentationml.presentation": ".pptx",
    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": ".xlsx",
    "text/plain": ".txt",
    "text/markdown": ".md",
}
_UNTYPED = {"", "application/octet-stream", "binary/octet-stream"}  # then the URL's suffix tells


@dataclass(frozen=True)
class WebLimits:
    """What one crawl may spend (the AIE_WEB_… settings and AIE_MAX_HTML_MB)."""

    request_seconds: float = DEADLINE  # one request, from connecting to the last byte of its answer
    max_html_bytes: int = MAX_HTML_BYTES  # an HTML page's size (a larger one is not read)
    extract_seconds: float = EXTRACT_SECONDS  # reading the text of one HTML page
    max_links: int = 1_000  # links followed (and kept for the next crawl) of one page
    max_queued: int = 10_000  # links waiting to be followed at once


@dataclass
class Record:
    """What the mirror holds of one URL; kept in the state between fetches."""

    name: str  # the document's name under the pages folder; "" for a page that is not one (noindex)
    etag: str | None = None
    modified: str | None = None  # the Last-Modified header, as the site sent it
    sha: str = ""  # of the file written
    meta: dict[str, Any] = field(default_factory=dict)  # DocumentMeta.to_dict()
    links: list[str] = field(default_factory=list)  # the source's pages it links to (followed on a 304)


class WebConnector:
    """A web source (see the module docstring)."""

    def __init__(self, spec: WebSource, env: Mapping[str, str] = os.environ, client: httpx.Client | None = None,
                 sleep: Callable[[float], None] = time.sleep, limits: WebLimits = WebLimits()) -> None:
        self.spec = spec
        self.name = spec.name
        try:
            self.bounds = CrawlBounds.of(spec.url)
        except ValueError:
            raise SourceError(f"{spec.name}: url must be an http or https URL") from None
        self._env = env
        self._client = client
        self._sleep = sleep
        self._limits = limits

    def fetch(self, workdir: Path, state: dict[str, Any], progress: Progress) -> Fetched:
        with self._session() as session:
            return _Crawl(session, Mirror(workdir / "pages"), state, progress, self._limits).run()

    def check(self) -> CheckReport:
        """robots.txt, the sitemaps and the start page read; nothing written."""
        try:
            with self._session() as session:
                site = session.site
                site.read_robots()
                listed = site.sitemap_pages()
                reached = site.start(lambda _: {})
                if listed is not None:
                    found = len(dict.fromkeys([reached.url, *listed]))
                    detail = f"sitemap lists {found} pages under {shown(self.bounds.start)}"
                else:
                    content = _content(reached.url, reached.answer, site.allowed, session.reader)
                    found = 1 + len([u for u in (content.links if content else []) if u != reached.url])
                    detail = f"no sitemap; the start page links to {found - 1} pages under {shown(self.bounds.start)}"
        except SourceError as exc:
            return CheckReport(False, detail=str(exc))
        except TooSlow as exc:
            return CheckReport(False, detail=f"the start page of {self.name}: {exc.reason}")
        limit = f" (max_pages {self.spec.max_pages})" if found > self.spec.max_pages else ""
        return CheckReport(True, found, detail + limit)

    def _session(self) -> _Session:
        token = None
        if self.spec.token_env:
            token = self._env.get(self.spec.token_env)
            if not token:
                raise SourceError(f"{self.spec.token_env} is not set (the token of {self.name})",
                                  variable=self.spec.token_env)
        return _Session(self.spec, self.bounds, token, self._client, self._sleep, self._limits)


class _Session:
    """A Site with its Fetcher and, unless one was given, its own HTTP client; the reader of its pages. Both
    closed after."""

    def __init__(self, spec: WebSource, bounds: CrawlBounds, token: str | None, client: httpx.Client | None,
                 sleep: Callable[[float], None], limits: WebLimits) -> None:
        self._own = client is None
        self._client = client or httpx.Client(timeout=TIMEOUT)
        fetcher = Fetcher(site=bounds.origin, token=token, delay=spec.delay, client=self._client, sleep=sleep,
                          max_html_bytes=limits.max_html_bytes, deadline=limits.request_seconds)
        self.site = Site(spec, bounds, fetcher)
        self.reader = PageReader(limits.extract_seconds)

    def __enter__(self) -> _Session:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.reader.close()
        if self._own:
            self._client.close()


@dataclass(frozen=True)
class _Content:
    """What a page's 200 answer gives the mirror."""

    data: bytes | None  # the file to write; None: the page may not be indexed (noindex)
    suffix: str = ".md"
    meta: DocumentMeta = DocumentMeta()
    dated: bool = False  # the page declares its date (else it is the answer's Last-Modified)
    links: list[str] = field(default_factory=list)


def _content(url: str, answer: Answer, allowed: Callable[[str], bool], reader: PageReader) -> _Content | None:
    """The document in a 200 answer: a page's main content, or a file as it is; None when it is neither.
    Raises TooSlow when the page's text cannot be read in time."""
    if answer.kind in HTML:
        page = reader.read(answer.body, url, answer.charset)
        links = [u for u in page.links if allowed(u)]
        if not page.index:
            return _Content(None, links=links)
        meta = DocumentMeta(url=url, link="fragment", title=page.title, date=page.date or _modified(answer)[0])
        return _Content(page.markdown.encode("utf-8"), ".md", meta, page.date is not None, links)
    suffix = _suffix(answer, url)
    return _Content(answer.body, suffix, DocumentMeta(url=url)) if suffix else None


def _pages(count: int) -> str:
    return "1 page" if count == 1 else f"{count} pages"


def _records(state: dict[str, Any]) -> dict[str, Record]:
    """The records of the previous fetch; none when its state is of another version or unreadable."""
    pages = state.get("pages") if isinstance(state, dict) and state.get("version") == STATE_VERSION else None
    try:
        return {url: Record(**data) for url, data in (pages or {}).items()}
    except (TypeError, AttributeError):
        return {}


def _suffix(answer: Answer, url: str) -> str | None:
    """The file suffix of a non-HTML document, None when the answer is not one the indexer reads."""
    kind = answer.kind
    if kind in _FILES:
        return _FILES[kind]
    if kind in _UNTYPED:
        path = urlsplit(url).path.lower()
        return next((s for s in set(_FILES.values()) if path.endswith(s)), None)
    return None


def _modified(answer: Answer) -> tuple[str | None, float | None]:
    """Last-Modified as an ISO date and as a file time."""
    value = answer.headers.get("last-modified")
    try:
        stamp = parsedate_to_datetime(value).timestamp() if value else None
    except (TypeError, ValueError, IndexError):
        stamp = None
    return normalize_date(value), stamp


class _Crawl:
    """One fetch: the crawl, and the mirror brought up to date with what it found."""

    def __init__(self, session: _Session, mirror: Mirror, state: dict[str, Any], progress: Progress,
                 limits: WebLimits) -> None:
        self.site = session.site
        self.reader = session.reader
        self.mirror = mirror
        self.progress = progress
        self.limits = limits
        self.old = _records(state)
        self.fresh = not self.old  # no state (a first fetch, or a lost one): files here are of no known page
        self.failures = 0
        self.records: dict[str, Record] = {}
        self.taken = {r.name.lower(): url for url, r in self.old.items() if r.name}
        self.seen: set[str] = set()
        self.queue: deque[str] = deque()  # links to follow, each once
        self.queued: set[str] = set()
        self.full = False  # links were left unfollowed: the queue was full
        self.crowded = 0  # pages that link to more of the source than a page's links bound
        self.unread: dict[str, int] = {}  # why pages the mirror has no copy of could not be read: how many
        self.result = Fetched(root=mirror.root)

    def run(self) -> Fetched:
        self.site.read_robots()
        listed = self.site.sitemap_pages()
        start, limit = self.site.bounds.start, self.site.spec.max_pages
        self.progress(1, min(limit, len(listed or ()) + 1), start)
        self.seen.add(start)
        links = self._settle(start, self.site.start(self._validators))
        self._enqueue(listed if listed is not None else links)
        visited = 1
        while self.queue:
            url = self.queue.popleft()
            self.queued.discard(url)
            if url in self.seen:
                continue
            if visited >= limit:
                self.result.complete = False
                break
            visited += 1
            self.progress(visited, min(limit, visited + len(self.queue)), url)
            links = self.visit(url)
            if listed is None:
                self._enqueue(links)
        self._recheck_unreached()
        if self.full or self.crowded:
            self.result.complete = False  # not every page it found was followed
        if self.fresh and self.result.complete and not self.failures:
            self._sweep()
        return self._finish()

    def _enqueue(self, links: list[str]) -> None:
        """Queue the links not seen nor queued yet that robots.txt allows now (a page's stored links were read
        earlier), as long as the queue has room."""
        for url in links:
            if url in self.seen or url in self.queued or not self.site.allowed(url):
                continue
            if len(self.queue) >= self.limits.max_queued:
                self.full = True
                return
            self.queue.append(url)
            self.queued.add(url)

    def _bounded(self, links: list[str]) -> list[str]:
        """A page's links, as many as a page's bound lets the crawl follow and keep."""
        if len(links) > self.limits.max_links:
            self.crowded += 1
            return links[: self.limits.max_links]
        return links

    def visit(self, url: str) -> list[str]:
        """Fetch `url` and bring its document up to date; the source's pages it links to."""
        self.seen.add(url)
        try:
            reached = self.site.follow(url, lambda u: self.site.allowed(u) and u not in self.seen, self._validators)
        except Unreachable as exc:
            self._keep(url, exc.reason)
            return []
        return self._settle(url, reached)

    def _settle(self, url: str, reached: Reached) -> list[str]:
        """Bring the document of `url` up to date with where its GET ended."""
        final = reached.url
        if reached.answer is None:
            links: list[str] = []
        else:
            self.seen.add(final)
            links = self._answered(final, reached.answer)
        if final != url and url in self.old:  # it redirects now
            target = self.records.get(final)
            if (target is not None and target.name) or (reached.answer and reached.answer.status in GONE):
                self._remove(url)  # moved to a page we have, or to one that is gone
            else:
                self._keep(url, reached.note or f"redirects to {shown(final)}, which failed")
        return links

    def _answered(self, url: str, answer: Answer) -> list[str]:
        if answer.status == 304 and url in self.old:
            record = self.old[url]
            self.records[url] = replace(record, links=self._bounded(record.links))
            return self.records[url].links
        if answer.status in GONE:
            self._remove(url)
            return []
        if answer.status != 200 or answer.too_large:
            self._keep(url, answer.reason)
            return []
        return self._store(url, answer)

    def _store(self, url: str, answer: Answer) -> list[str]:
        """A page answered 200: its document written when it changed; the source's pages it links to."""
        try:
            content = _content(url, answer, self.site.allowed, self.reader)
        except TooSlow as exc:
            self._keep(url, exc.reason)
            return []
        if content is not None:
            content = replace(content, links=self._bounded(content.links))
        old = self.old.get(url)
        validators = answer.headers.get("etag"), answer.headers.get("last-modified")
        if content is None:
            self._keep(url, f"not a document ({answer.kind or 'no type'})", failed=False)
            return []
        if content.data is None or not content.data.strip():
            if old is not None and old.name and content.data is not None:
                self._keep(url, "no text in the page")  # more likely a broken page than an emptied one
                return content.links
            self._remove(url)  # noindex: not a document (any more), its links still followed
            self.records[url] = Record("", *validators, links=content.links)
            return content.links
        sha = hashlib.sha256(content.data).hexdigest()
        name = self._name(url, content.suffix)
        meta = content.meta
        same = old is not None and old.name == name and old.sha == sha and self.mirror.has(name)
        if same and not content.dated and meta.date != old.meta.get("date"):
            meta = replace(meta, date=old.meta.get("date"))  # a server that stamps every answer "now"
        if not same:
            self.mirror.write(name, content.data, _modified(answer)[1])
        if not same or meta.to_dict() != old.meta:
            self.result.changed.append(name)
        self.records[url] = Record(name, *validators, sha, meta.to_dict(), content.links)
        return content.links

    def _name(self, url: str, suffix: str) -> str:
        old = self.old.get(url)
        if old is not None and old.name.endswith(suffix):
            return old.name
        if old is not None and old.name:
            self._remove(url)  # served as another kind of file now: a new name, the old file goes
        taken = {n for n, owner in self.taken.items() if owner != url}
        name = self.mirror.unique_name(url, self.site.bounds, suffix, taken)
        self.taken[name.lower()] = url
        return name

    def _validators(self, url: str) -> dict[str, str]:
        """Conditional request headers for a page whose copy we still have."""
        record = self.old.get(url)
        if record is None or (record.name and not self.mirror.has(record.name)):
            return {}
        headers = {}
        if record.etag:
            headers["If-None-Match"] = record.etag
        if record.modified:
            headers["If-Modified-Since"] = record.modified
        return headers

    def _keep(self, url: str, reason: str, *, failed: bool = True) -> None:
        """`url` could not be read: its last good copy, if any, stays."""
        self.failures += failed
        record = self.old.get(url)
        if record is not None and url not in self.records:
            self.records[url] = record
            if record.name:
                self.result.kept[record.name] = reason
        elif record is None and failed:
            self.unread[reason] = self.unread.get(reason, 0) + 1

    def _remove(self, url: str) -> None:
        record = self.records.pop(url, None) or self.old.get(url)
        if record is not None and record.name and record.name not in self.result.removed:
            self.mirror.delete(record.name)
            self.result.removed.append(record.name)
            self.taken.pop(record.name.lower(), None)
        self.old.pop(url, None)

    def _recheck_unreached(self) -> None:
        """Pages we had that this crawl did not reach: asked for directly, removed only when gone."""
        for url in [u for u in self.old if u not in self.seen and u not in self.records]:
            if not self.site.bounds.contains(url):
                self._remove(url)  # the source's url changed: no longer one of its pages
            elif not self.site.robots.can_fetch(url, USER_AGENT):
                self._keep(url, "robots.txt disallows it now", failed=False)
            else:
                self.visit(url)

    def _sweep(self) -> None:
        """Files no page of a complete crawl names (left by a fetch whose state was lost) are removed."""
        named = {r.name for r in self.records.values() if r.name}
        for name in self.mirror.names():
            if name not in named:
                self.mirror.delete(name)
                self.result.removed.append(name)

    def _finish(self) -> Fetched:
        result = self.result
        limits = self.limits
        if self.crowded:
            result.notes.append(f"{_pages(self.crowded)} linked to more than {limits.max_links} pages of the source "
                                f"(AIE_WEB_MAX_LINKS): only the first {limits.max_links} of each were followed")
        if self.full:
            result.notes.append(f"more links were found than the crawl may queue ({limits.max_queued}, "
                                "AIE_WEB_MAX_QUEUED): the rest were not followed")
        result.notes += [f"{_pages(count)} not read: {reason}" for reason, count in self.unread.items()]
        result.documents = {r.name: DocumentMeta.from_dict(r.meta) for r in self.records.values() if r.name}
        result.state = {"version": STATE_VERSION, "pages": {u: asdict(r) for u, r in self.records.items()}}
        result.calls = self.site.fetcher.calls
        return result
