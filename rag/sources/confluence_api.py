"""The Confluence REST API v1 as the connector uses it, through the kept client (atlassian-python-api) for
its session and authentication: every request counted and done within a deadline, retried with backoff on
5xx and timeouts, a 429 waited out for its Retry-After (capped), and every failure turned into one
`SourceError` line that names what to fix and never the token."""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from typing import Any
from urllib.parse import urlencode, urlsplit, urlunsplit

import requests
from atlassian import Confluence
from tenacity import RetryCallState, Retrying, retry_if_exception_type, stop_after_attempt, wait_exponential

from rag.sources.base import SourceError
from rag.sources.config import ConfluenceSource
from rag.sources.deadline import Overdue, within

# The client logs each request as a curl line and each response body at DEBUG: restricted pages' text in the
# logs of anyone who turns DEBUG on. (Its curl line shows its default headers only, not the session's
# Authorization: checked by test_data_center_with_a_personal_access_token.)
logging.getLogger("atlassian").setLevel(logging.INFO)


@dataclass(frozen=True)
class Retry:
    """How hard to try before a request's failure becomes the sync's."""

    attempts: int = 4  # per request, the first included
    backoff: float = 0.5  # seconds before the second attempt, doubling after each
    max_wait: float = 60.0  # the longest wait between attempts, a Retry-After's too
    timeout: float = 30.0  # seconds Confluence may keep a request waiting for its next bytes
    deadline: float = 120.0  # seconds one request may take in all, an attachment's download included


class _Again(Exception):
    """A request worth making again (a 5xx, a 429, a timeout); `message` is what to report if it stays so."""

    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class Refused(SourceError):
    """A 4xx other than 401 and 429: what was asked for is not there, or not for this account."""


class NotFound(Refused):
    """A 404: the space, page or attachment asked for does not exist (or no longer)."""


class Unreadable(SourceError):
    """An answer that is not JSON."""


class ConfluenceApi:
    """One source's connection: `get` (JSON), `listing` (every result of a paged listing), `download`."""

    def __init__(self, spec: ConfluenceSource, env: Mapping[str, str], retry: Retry = Retry(),
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self.spec = spec
        self.base = spec.url.rstrip("/")
        self.calls = 0
        self._retry = retry
        self._sleep = sleep
        self._client = _client(spec, env, retry.timeout)

    def __repr__(self) -> str:
        return f"ConfluenceApi({self.spec.name!r}, {self.base!r}, calls={self.calls})"

    def get(self, path: str, params: Mapping[str, Any] | None = None, *, what: str) -> Any:
        """The answer's JSON (an object, or a list for the few resources that answer one)."""
        url = self._url(path) + (f"?{urlencode(params, safe=',')}" if params else "")
        return self._json(self._request(url, what), what)

    def listing(self, path: str, params: Mapping[str, Any], *, what: str) -> Iterator[dict]:
        """Every result of a listing, following `_links.next` page after page."""
        url: str | None = self._url(path) + f"?{urlencode(params, safe=',')}"
        seen: set[str] = set()
        while url is not None:
            if url in seen:
                raise SourceError(f"Confluence repeated a page of {what} for {self.spec.name}: "
                                  "listing stopped")
            seen.add(url)
            data = self._json(self._request(url, what), what)
            yield from data.get("results", [])
            following = data.get("_links", {}).get("next")
            url = self._url(following) if following else None

    def download(self, link: str, *, what: str) -> bytes:
        return self._request(self._url(link), what).content

    def close(self) -> None:
        self._client.close()

    def _json(self, response: requests.Response, what: str) -> Any:
        try:
            return response.json()
        except ValueError:
            raise Unreadable(f"Confluence's answer for {self.spec.name} ({what}) was not JSON") from None

    def _url(self, path: str) -> str:
        """An absolute URL for a path relative to the base (as `_links` give them), with or without its
        context path (/wiki)."""
        parts = urlsplit(self.base)
        if path.startswith(("http://", "https://")):  # on the configured host alone: the token goes with it
            link = urlsplit(path)
            return urlunsplit((parts.scheme, parts.netloc, link.path, link.query, ""))
        if parts.path and path.startswith(parts.path.rstrip("/") + "/"):
            return f"{parts.scheme}://{parts.netloc}{path}"
        return self.base + "/" + path.lstrip("/")

    def _request(self, url: str, what: str) -> requests.Response:
        retrying = Retrying(stop=stop_after_attempt(self._retry.attempts), wait=self._wait,
                            retry=retry_if_exception_type(_Again), sleep=self._sleep, reraise=True)
        try:
            return retrying(self._once, url, what)
        except _Again as exc:
            raise SourceError(str(exc), retry_after=exc.retry_after, transient=True) from None

    def _once(self, url: str, what: str) -> requests.Response:
        self.calls += 1
        try:
            response = within(self._retry.deadline, lambda _: self._client.get(url, absolute=True, advanced_mode=True))
        except Overdue:  # not asked again: it would most likely take as long again
            raise SourceError(f"Confluence took longer than {self._retry.deadline:g} s to answer for "
                              f"{self.spec.name} ({what})", transient=True) from None
        except requests.Timeout:
            raise _Again(f"Confluence did not answer in {self._retry.timeout:g} s for {self.spec.name} "
                         f"({what})")
        except requests.RequestException as exc:
            raise _Again(f"Confluence could not be reached for {self.spec.name} ({what}): "
                         f"{exc.__class__.__name__}")
        _raise_for_status(response, self.spec, what)
        return response

    def _wait(self, state: RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome else None
        if isinstance(exc, _Again) and exc.retry_after is not None:
            return min(exc.retry_after, self._retry.max_wait)
        return wait_exponential(multiplier=self._retry.backoff, max=self._retry.max_wait)(state)


def _client(spec: ConfluenceSource, env: Mapping[str, str], timeout: float) -> Confluence:
    token = env.get(spec.token_env, "").strip()
    if not token:
        raise SourceError(f"{spec.name}: {spec.token_env} is not set (the Confluence API token)",
                          variable=spec.token_env)
    cloud = spec.cloud
    if cloud is None:
        cloud = (urlsplit(spec.url).hostname or "").endswith(".atlassian.net")
    # retry_with_header off: the client would sleep on any Retry-After, uncapped by us and uncounted.
    common = {"cloud": cloud, "timeout": timeout, "retry_with_header": False, "backoff_and_retry": False}
    if spec.user_env is None:  # Data Center personal access token
        return Confluence(url=spec.url, token=token, **common)
    user = env.get(spec.user_env, "").strip()
    if not user:
        raise SourceError(f"{spec.name}: {spec.user_env} is not set (the account's email, with "
                          f"{spec.token_env})", variable=spec.user_env)
    return Confluence(url=spec.url, username=user, password=token, **common)


def _raise_for_status(response: requests.Response, spec: ConfluenceSource, what: str) -> None:
    status = response.status_code
    if status < 400:
        return
    said = f"Confluence answered {status} for {spec.name}"
    if status == 401:
        user = f" and {spec.user_env}" if spec.user_env else ""
        raise SourceError(f"{said}: check {spec.token_env}{user}", variable=spec.token_env)
    if status == 403:
        raise Refused(f"{said}: the account of {spec.token_env} may not read {what}", variable=spec.token_env)
    if status == 404:
        raise NotFound(f"{said}: {what} not found (check the space keys and url)")
    if status == 429:
        raise _Again(f"{said} ({what}): rate limited", retry_after=_retry_after(response))
    if status >= 500:
        raise _Again(f"{said} ({what}): a server error, retried")
    raise Refused(f"{said} ({what})")


def _retry_after(response: requests.Response) -> float:
    """Retry-After in seconds (a number or an HTTP date); 1 s when absent or unreadable."""
    value = response.headers.get("Retry-After", "").strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            seconds = parsedate_to_datetime(value).timestamp() - time.time()
        except (TypeError, ValueError):
            seconds = 1.0
    return max(0.0, seconds) if math.isfinite(seconds) else 1.0
