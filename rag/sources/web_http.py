"""The web source's HTTP: one request at a time, spaced by the source's delay, retried with backoff on
5xx answers, timeouts and dropped connections (a 429 or 503 waits what its Retry-After asks, up to a
minute), never following a redirect by itself, reading at most `max_bytes` of a body (`max_html_bytes` of
an HTML page's, which costs far more to read), each request done within `deadline` seconds (connecting,
headers and body: a server trickling its answer is not waited for longer, nor asked again), counting every
request, and sending the bearer token only to the source's own origin."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from email.utils import parsedate_to_datetime

import httpx
from tenacity import RetryCallState, Retrying, stop_after_attempt, wait_exponential

from rag.sources.deadline import Overdue, within
from rag.sources.web_urls import origin

USER_AGENT = "ai-employee/0.1 (knowledge-base bot of AI employee; reads robots.txt)"
ROBOTS_AGENT = "ai-employee"  # the product token a robots.txt group names to address this bot
RETRIED = frozenset({429, 500, 502, 503, 504})
MAX_RETRY_AFTER = 60.0  # a longer Retry-After is not waited for: the page is kept, the source says when
MAX_BYTES = 50 * 1024 * 1024  # the indexer's own limit for one file
MAX_HTML_BYTES = 5 * 1024 * 1024  # an HTML page's (AIE_MAX_HTML_MB)
TIMEOUT = httpx.Timeout(30.0, connect=10.0)  # each wait for the next bytes
DEADLINE = 60.0  # seconds one request may take in all (AIE_WEB_REQUEST_TIMEOUT)
HTML = frozenset({"text/html", "application/xhtml+xml"})

_log = logging.getLogger(__name__)


@dataclass
class Answer:
    """One HTTP answer, its body read (up to the size limit)."""

    url: str
    status: int
    headers: httpx.Headers = field(default_factory=httpx.Headers)
    body: bytes = b""
    too_large: bool = False
    charset: str | None = None  # the one its Content-Type names
    limit: int = MAX_BYTES  # the most of its body that is read

    @property
    def kind(self) -> str:
        """The media type its Content-Type names ("" when none)."""
        return self.headers.get("content-type", "").split(";", 1)[0].strip().lower()

    @property
    def reason(self) -> str:
        """Why a page could not be read, as `kept` reports it."""
        if not self.too_large:
            return f"HTTP {self.status}"
        if self.kind in HTML:
            return f"an HTML page larger than {megabytes(self.limit)} (AIE_MAX_HTML_MB)"
        return f"larger than {megabytes(self.limit)}"

    def retry_after(self) -> float | None:
        return retry_after(self.headers.get("retry-after"))


class Unreachable(Exception):
    """No answer at all after the retries: `reason` is "timed out", "connection failed"…"""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def retry_after(value: str | None) -> float | None:
    """Seconds a Retry-After header asks for (delay-seconds or an HTTP-date); None when absent or unreadable."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return max(0.0, (when - datetime.now(timezone.utc)).total_seconds())


def _worth_retrying(state: RetryCallState) -> bool:
    outcome = state.outcome
    if outcome is None:
        return False
    if outcome.failed:
        return isinstance(outcome.exception(), _Transient)
    answer: Answer = outcome.result()
    after = answer.retry_after()
    return answer.status in RETRIED and (after is None or after <= MAX_RETRY_AFTER)


class _Transient(Exception):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class Fetcher:
    """GET requests for one web source (see the module docstring)."""

    def __init__(self, *, site: str, token: str | None, delay: float, client: httpx.Client,
                 sleep: Callable[[float], None] = time.sleep, attempts: int = 3, max_bytes: int = MAX_BYTES,
                 max_html_bytes: int = MAX_HTML_BYTES, deadline: float = DEADLINE) -> None:
        self.delay = delay
        self.calls = 0
        self._site = site  # the origin the token belongs to
        self._token = token
        self._client = client
        self._sleep = sleep
        self._max_bytes = max_bytes
        self._max_html_bytes = max_html_bytes
        self._deadline = deadline
        self._last = float("-inf")
        self._backoff = wait_exponential(multiplier=0.5, min=0.5, max=10)
        self._attempts = attempts

    def get(self, url: str, headers: dict[str, str] | None = None) -> Answer:
        """The answer to GET `url` (a redirect is an answer: 3xx with its Location). Raises Unreachable."""
        retrying = Retrying(stop=stop_after_attempt(self._attempts), wait=self._wait, retry=_worth_retrying,
                            sleep=self._sleep, retry_error_callback=lambda state: state.outcome.result())
        try:
            return retrying(self._once, url, headers or {})
        except _Transient as exc:
            raise Unreachable(exc.reason) from None

    def _wait(self, state: RetryCallState) -> float:
        outcome = state.outcome
        if outcome is not None and not outcome.failed:
            after = outcome.result().retry_after()
            if after is not None:
                return after
        return self._backoff(state)

    def _once(self, url: str, extra: dict[str, str]) -> Answer:
        self._pace()
        headers = {"User-Agent": USER_AGENT, **extra}
        if self._token and origin(url) == self._site:
            headers["Authorization"] = f"Bearer {self._token}"
        self.calls += 1
        try:
            answer = within(self._deadline, lambda stop: self._exchange(url, headers, stop))
        except Overdue:  # asked again, it would most likely take as long again
            raise Unreachable(f"took longer than {self._deadline:g} s (AIE_WEB_REQUEST_TIMEOUT)") from None
        finally:
            self._last = time.monotonic()
        if answer.status in RETRIED:
            _log.info("web: %s answered %s", shown(url), answer.status)
        return answer

    def _exchange(self, url: str, headers: dict[str, str], stop: threading.Event) -> Answer:
        """GET `url` and read its answer, until `stop` is set."""
        try:
            with self._client.stream("GET", url, headers=headers, follow_redirects=False) as response:
                answer = Answer(url, response.status_code, response.headers, charset=response.charset_encoding)
                if not response.is_redirect:
                    self._read(response, answer, stop)
                return answer
        except httpx.TimeoutException:
            raise _Transient("timed out") from None
        except httpx.TransportError as exc:
            raise _Transient(f"connection failed ({exc.__class__.__name__})") from None
        except httpx.HTTPError as exc:  # an undecodable body, a malformed URL: retrying will not help
            raise Unreachable(f"unreadable answer ({exc.__class__.__name__})") from None

    def _read(self, response: httpx.Response, answer: Answer, stop: threading.Event) -> None:
        answer.limit = self._max_html_bytes if answer.kind in HTML else self._max_bytes
        body = bytearray()
        for chunk in response.iter_bytes():
            if stop.is_set():
                return  # past the deadline: nobody waits for this answer any more
            body += chunk
            if len(body) > answer.limit:
                answer.too_large = True
                break
        answer.body = bytes(body)

    def _pace(self) -> None:
        wait = self.delay - (time.monotonic() - self._last)
        if wait > 0:
            self._sleep(wait)


def megabytes(size: int) -> str:
    return f"{size / 2**20:g} MB"


def shown(url: str) -> str:
    """A URL as logs and messages show it: without its query (which may carry a token)."""
    return url.split("?", 1)[0]
