"""A local web site for the web source's tests: real sockets, real HTTP, one background thread.

It answers GET as a web server does:
  * the pages put on it (`put`), each with a strong ETag and a Last-Modified date, a conditional GET
    answered 304 Not Modified when the copy is current (RFC 9110 13.1.1 If-None-Match, which wins over
    13.1.3 If-Modified-Since);
  * /robots.txt (RFC 9309) when `robots` is set, and /sitemap.xml built from the pages (sitemaps.org
    protocol 0.9: a `<urlset>`, or with `sitemap="index"` a `<sitemapindex>` naming /sitemaps/pages.xml);
  * 404 for any other path; `fail(path, status)` makes a path answer a status instead (a 500, a 410, a 429
    with a Retry-After, RFC 9110 10.2.3), `redirect(path, to)` a 301 with a Location;
  * `slow(path, seconds)` delays an answer; `trickle(path, every)` sends its body a byte at a time;
  * with `token`, 401 and a `WWW-Authenticate: Bearer` challenge to a request without `Bearer {token}`.
Every request is recorded (`hits`) with the headers the tests look at.
"""

from __future__ import annotations

import asyncio
import hashlib
import threading
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from email.utils import format_datetime, parsedate_to_datetime
from html import escape

from aiohttp import web

from tests.fakes.local_server import LocalServer, trickled

MENU = {"Intranet home": "/docs/home", "Travel desk": "/docs/travel", "Leave planner": "/docs/leave",
        "Contact us": "/docs/contact"}  # the site menu on every page: its label and its link
FOOTER = "Example Corp intranet. Imprint and privacy notice."
HTML = "text/html; charset=utf-8"


@dataclass
class Resource:
    body: bytes
    content_type: str
    modified: datetime

    @property
    def etag(self) -> str:
        return '"' + hashlib.sha256(self.body).hexdigest()[:16] + '"'


@dataclass(frozen=True)
class Hit:
    path: str  # with its query
    status: int
    if_none_match: str | None
    if_modified_since: str | None
    authorization: str | None
    user_agent: str | None

    @property
    def conditional(self) -> bool:
        return bool(self.if_none_match or self.if_modified_since)


def page(title: str, sections: list[tuple[str, str]], links: list[str] = (), *, date: str | None = None) -> str:
    """An intranet page: a header with the site menu, the article (h1, then an h2 per section), a footer."""
    menu = "".join(f'<li><a href="{href}">{label}</a></li>' for label, href in MENU.items())
    body = "".join(f"<h2>{escape(h)}</h2><p>{escape(text)}</p>" for h, text in sections)
    see = "".join(f'<li><a href="{escape(href)}">{escape(href)}</a></li>' for href in links)
    meta = f'<meta name="last-modified" content="{date}">' if date else ""
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>{escape(title)} - Example Intranet</title>"
            f"{meta}</head><body><header class='site-header'><nav><ul>{menu}</ul></nav></header>"
            f"<main><article><h1>{escape(title)}</h1>{body}<h2>Related pages</h2><ul>{see}</ul></article></main>"
            f"<footer><p>{FOOTER}</p></footer></body></html>")


class FakeWebsite(LocalServer):
    name = "fake web site"

    def __init__(self, *, robots: str | None = None, sitemap: str | None = None, token: str | None = None,
                 conditional: bool = True) -> None:
        super().__init__()
        self.robots = robots
        self.sitemap = sitemap  # None: no sitemap; "urlset" or "index"
        self.token = token
        self.conditional = conditional  # False: a server that ignores If-None-Match and If-Modified-Since
        self.resources: dict[str, Resource] = {}
        self.hits: list[Hit] = []
        self._failures: dict[str, list[tuple[int, dict[str, str]]]] = {}
        self._broken: dict[str, tuple[int, dict[str, str]]] = {}
        self._redirects: dict[str, str] = {}
        self._slow: dict[str, float] = {}
        self._trickle: dict[str, float] = {}
        self._lock = threading.Lock()
        self._clock = datetime(2026, 3, 1, 9, 0, tzinfo=timezone.utc)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def routes(self, app: web.Application) -> None:
        app.router.add_get("/{tail:.*}", self._handle)

    def put(self, path: str, body: str | bytes, content_type: str = HTML, *, modified: datetime | None = None) -> None:
        """Publish (or edit) `path`; each edit is a second later than the last, unless `modified` is given."""
        with self._lock:
            self._clock = modified or self._clock + timedelta(seconds=1)
            data = body.encode("utf-8") if isinstance(body, str) else body
            self.resources[path] = Resource(data, content_type, self._clock)

    def delete(self, path: str) -> None:
        with self._lock:
            self.resources.pop(path, None)

    def fail(self, path: str, status: int, *, times: int | None = None, retry_after: str | None = None) -> None:
        """`path` answers `status`: the next `times` requests, or all of them (until `heal`)."""
        headers = {"Retry-After": retry_after} if retry_after else {}
        with self._lock:
            if times is None:
                self._broken[path] = (status, headers)
            else:
                self._failures.setdefault(path, []).extend([(status, headers)] * times)

    def heal(self, path: str) -> None:
        with self._lock:
            self._broken.pop(path, None)
            self._failures.pop(path, None)

    def slow(self, path: str, seconds: float) -> None:
        """`path` answers only after `seconds` (a client with a shorter timeout gives up first)."""
        with self._lock:
            self._slow[path] = seconds

    def trickle(self, path: str, every: float) -> None:
        """`path` sends its answer's body one byte every `every` seconds: each wait is short, the answer long."""
        with self._lock:
            self._trickle[path] = every

    def redirect(self, path: str, to: str) -> None:
        with self._lock:
            self._redirects[path] = to

    def hits_for(self, path: str) -> list[Hit]:
        with self._lock:
            return [h for h in self.hits if h.path == path]

    def page_hits(self) -> list[Hit]:
        """The requests for pages (not robots.txt, not sitemaps)."""
        with self._lock:
            return [h for h in self.hits if h.path != "/robots.txt" and "sitemap" not in h.path]

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        path = request.raw_path  # as sent, query included
        headers = request.headers
        with self._lock:
            delay, every = self._slow.get(path, 0.0), self._trickle.get(path)
        if delay:
            await asyncio.sleep(delay)
        with self._lock:
            status, body, out = self._answer(path, headers)
            self.hits.append(Hit(path, status, headers.get("If-None-Match"), headers.get("If-Modified-Since"),
                                 headers.get("Authorization"), headers.get("User-Agent")))
        if every is not None and status == 200:
            return await trickled(request, status, body, out, every)
        return web.Response(status=status, body=body if status != 304 else None, headers=out)

    def _answer(self, path: str, headers) -> tuple[int, bytes, dict[str, str]]:
        if self.token and headers.get("Authorization") != f"Bearer {self.token}":
            return 401, b"login required", {"WWW-Authenticate": 'Bearer realm="intranet"'}
        failure = self._failures[path].pop(0) if self._failures.get(path) else self._broken.get(path)
        if failure is not None:
            return failure[0], f"error {failure[0]}".encode(), failure[1]
        if path in self._redirects:
            return 301, b"", {"Location": self._redirects[path]}
        if path == "/robots.txt" and self.robots is not None:
            return 200, self.robots.encode(), {"Content-Type": "text/plain"}
        if self.sitemap and path in ("/sitemap.xml", "/sitemaps/pages.xml"):
            return 200, self._sitemap(path), {"Content-Type": "application/xml"}
        resource = self.resources.get(path)
        if resource is None:
            return 404, b"<html><body><h1>Not found</h1></body></html>", {"Content-Type": HTML}
        validators = {"ETag": resource.etag, "Last-Modified": format_datetime(resource.modified, usegmt=True)}
        if self.conditional and _not_modified(resource, headers):
            return 304, b"", validators
        return 200, resource.body, {"Content-Type": resource.content_type, **validators}

    def _sitemap(self, path: str) -> bytes:
        ns = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"'
        if self.sitemap == "index" and path == "/sitemap.xml":
            return (f'<?xml version="1.0" encoding="UTF-8"?><sitemapindex {ns}><sitemap>'
                    f"<loc>{self.url}/sitemaps/pages.xml</loc></sitemap></sitemapindex>").encode()
        urls = "".join(f"<url><loc>{escape(self.url + p)}</loc></url>" for p in self.resources)
        return f'<?xml version="1.0" encoding="UTF-8"?><urlset {ns}>{urls}</urlset>'.encode()


def _not_modified(resource: Resource, headers) -> bool:
    if "If-None-Match" in headers:
        tags = [t.strip().removeprefix("W/") for t in headers["If-None-Match"].split(",")]
        return resource.etag in tags or "*" in tags
    if "If-Modified-Since" in headers:
        try:
            return resource.modified <= parsedate_to_datetime(headers["If-Modified-Since"])
        except (TypeError, ValueError):
            return False
    return False
