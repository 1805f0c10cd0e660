"""One web source's site as the crawl sees it: what its robots.txt allows, what its sitemaps list, and GET
requests that follow redirects only while they stay within the source. What fails here before any page
is read (robots.txt, a sitemap, the start page) raises SourceError: nothing is fetched or deleted."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import urlsplit

from protego import Protego

from rag.sources.base import SourceError
from rag.sources.config import WebSource
from rag.sources.web_http import USER_AGENT, Answer, Fetcher, Unreachable, shown
from rag.sources.web_urls import CrawlBounds, normalize, origin, parse_sitemap

REDIRECTS = frozenset({301, 302, 303, 307, 308})
GONE = frozenset({404, 410})
MAX_REDIRECTS = 5
MAX_SITEMAPS = 50  # sitemap files read per fetch (an index and its sitemaps)
MAX_CRAWL_DELAY = 60.0  # a longer Crawl-delay would keep one fetch going for days


@dataclass(frozen=True)
class Reached:
    """Where a GET ended after the redirects it was allowed to follow."""

    url: str  # the last URL requested, or the redirect's target when it was not followed
    answer: Answer | None  # None: a redirect that was not followed (`note` says why)
    note: str = ""


class Site:
    """The site of one web source, read through one Fetcher."""

    def __init__(self, spec: WebSource, bounds: CrawlBounds, fetcher: Fetcher) -> None:
        self.spec = spec
        self.bounds = bounds
        self.fetcher = fetcher
        self.robots = Protego.parse("")
        self._host = urlsplit(bounds.start).netloc

    def allowed(self, url: str) -> bool:
        """In the source, possibly a document, and allowed by robots.txt."""
        return self.bounds.wanted(url) and self.robots.can_fetch(url, USER_AGENT)

    def follow(self, url: str, allowed: Callable[[str], bool], headers: Callable[[str], dict[str, str]]) -> Reached:
        """GET `url` (with `headers(url)`), following redirects whose target is `allowed`. Raises Unreachable."""
        for _ in range(MAX_REDIRECTS + 1):
            answer = self.fetcher.get(url, headers(url))
            if answer.status not in REDIRECTS:
                return Reached(url, answer)
            target = normalize(answer.headers.get("location", ""), url)
            if target is None or not allowed(target):
                return Reached(target or url, None, f"redirects to {shown(target or 'nowhere')}")
            url = target
        return Reached(url, None, "too many redirects")

    def start(self, headers: Callable[[str], dict[str, str]]) -> Reached:
        """The start page (the source's url), answered 200 or 304; anything else raises SourceError."""
        start = self.bounds.start
        if not self.robots.can_fetch(start, USER_AGENT):
            raise SourceError(f"robots.txt of {self._host} disallows {shown(start)} for {self.spec.name}")
        try:
            reached = self.follow(start, self.allowed, headers)
        except Unreachable as exc:
            raise SourceError(f"{self._host} {exc.reason} for {self.spec.name}", transient=True) from None
        answer = reached.answer
        if answer is None or answer.status not in (200, 304) or answer.too_large:
            raise self.failure(answer, "the start page", reached.note)
        return reached

    def read_robots(self) -> None:
        """robots.txt (RFC 9309): a 4xx allows everything; a 5xx or no answer stops the fetch. Its
        Crawl-delay spaces the requests when longer than the source's delay (up to a minute)."""
        url = f"{self.bounds.origin}/robots.txt"
        reached = self._get(url, "robots.txt", lambda u: origin(u) == self.bounds.origin)
        answer = reached.answer
        if answer is None or _absent(answer):
            self.robots = Protego.parse("")
        elif answer.status == 200 and not answer.too_large:
            self.robots = Protego.parse(answer.body.decode("utf-8", errors="replace"))
        else:
            raise self.failure(answer, "robots.txt")
        delay = min(float(self.robots.crawl_delay(USER_AGENT) or 0), MAX_CRAWL_DELAY)
        self.fetcher.delay = max(self.spec.delay, delay)

    def sitemap_pages(self) -> list[str] | None:
        """The source's pages the sitemaps list (robots.txt's `Sitemap:` lines, else sitemap.xml in the
        source's folder or at the site's root), in their order; None when there is no sitemap of them."""
        declared = [u for u in (normalize(s, self.bounds.origin) for s in self.robots.sitemaps)
                    if u and origin(u) == self.bounds.origin]
        todo = deque(dict.fromkeys(declared or [f"{self.bounds.origin}{self.bounds.folder}sitemap.xml",
                                                f"{self.bounds.origin}/sitemap.xml"]))
        pages: dict[str, None] = {}
        read = 0
        while todo and read < MAX_SITEMAPS:
            url = todo.popleft()
            read += 1
            answer = self._get(url, f"the sitemap {shown(url)}", lambda u: origin(u) == self.bounds.origin).answer
            if answer is None or _absent(answer):
                continue  # no sitemap there
            if answer.status != 200 or answer.too_large:
                raise self.failure(answer, f"the sitemap {shown(url)}")
            sitemap = parse_sitemap(answer.body)
            if sitemap is None:
                continue
            located = [u for u in (normalize(loc, url) for loc in sitemap.locations) if u]
            if sitemap.is_index:
                todo.extend(u for u in located if origin(u) == self.bounds.origin)
            else:
                pages.update((u, None) for u in located if self.allowed(u))
        return list(pages) or None

    def _get(self, url: str, what: str, allowed: Callable[[str], bool]) -> Reached:
        try:
            return self.follow(url, allowed, lambda _: {})
        except Unreachable as exc:
            raise SourceError(f"{what} of {self._host} {exc.reason} for {self.spec.name}", transient=True) from None

    def failure(self, answer: Answer | None, what: str, note: str = "") -> SourceError:
        """The error of a listing that cannot go on: `what` (robots.txt, a sitemap, the start page) failed."""
        name, token = self.spec.name, self.spec.token_env
        if answer is None:
            return SourceError(f"{what} of {self._host} {note} for {name}" + (f": check {token}" if token else ""),
                               variable=token)
        if answer.status in (401, 403):
            fix = f"check {token}" if token else "the site wants a login: set token_env to the variable holding a token"
            return SourceError(f"{self._host} answered {answer.status} for {name}: {fix}", variable=token)
        if answer.status in GONE:
            return SourceError(f"{what} of {name} answered {answer.status}: check the source's url")
        transient = answer.status in (408, 429) or answer.status >= 500
        return SourceError(f"{what} of {self._host} answered {answer.reason} for {name}", transient=transient,
                           retry_after=answer.retry_after())


def _absent(answer: Answer) -> bool:
    """A 4xx (but a 408 or 429, which say "later"): the file is not there for us."""
    return 400 <= answer.status < 500 and answer.status not in (408, 429)
