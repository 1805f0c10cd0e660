"""The chat surfaces' people, asked by email (rag.sources.readers.People):

- Slack: `users.lookupByEmail` (the bot token needs the users:read.email scope);
- Teams: Microsoft Graph with a token of the bot's own Entra app, `GET /v1.0/users/{email}` (the address as
  the user principal name), else `GET /v1.0/users?$filter=mail eq '{email}'` (application permission
  User.Read.All).

Groups are never asked for by name (anyone may create a Slack user group or a Microsoft 365 group named like
a wiki group): the sources file maps each wiki group to its chat groups' ids.

A definite "no such user" is None; anything else that goes wrong raises LookupFailed with the error
code or HTTP status (never a token), transient for a 5xx, a 429 or a network failure — tried again a few
times first (Slack through slack_sdk's retry handlers, Graph waiting out a 429's Retry-After). A call is
given `deadline` seconds in all (the clients' timeouts bound each wait for the next bytes only)."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from urllib.parse import quote

import httpx
from tenacity import RetryCallState, Retrying, retry_if_exception, stop_after_attempt, wait_exponential
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError, SlackRequestError
from slack_sdk.http_retry.builtin_handlers import ConnectionErrorRetryHandler, RateLimitErrorRetryHandler

from rag.sources.deadline import Overdue, within
from rag.sources.readers import LookupFailed

_log = logging.getLogger(__name__)
_SLACK_TRANSIENT = {"ratelimited", "service_unavailable", "fatal_error", "request_timeout", "internal_error"}
_SLACK_SCOPES = {"lookupByEmail": "users:read.email"}
MAX_WAIT = 30.0  # seconds: the longest a Graph lookup waits before trying again (a longer Retry-After fails it)
DEADLINE = 30.0  # seconds one call may take in all (Slack's retries included)


class SlackPeople:
    """Slack users by email, through the Web API at `api_url`."""

    name = "Slack"

    def __init__(self, token: str, *, api_url: str = "https://slack.com/api/", timeout: float = 10.0,
                 deadline: float = DEADLINE) -> None:
        self._deadline = deadline
        self._client = WebClient(token=token, base_url=api_url, timeout=int(timeout), retry_handlers=[
            RateLimitErrorRetryHandler(max_retry_count=3), ConnectionErrorRetryHandler(max_retry_count=2)])

    def __repr__(self) -> str:
        return f"SlackPeople({self._client.base_url!r})"

    def users(self, emails: list[str]) -> dict[str, str | None]:
        found: dict[str, str | None] = {}
        for email in emails:
            try:
                found[email] = self._call(self._client.users_lookupByEmail, "lookupByEmail", email=email)["user"]["id"]
            except _NoSuch:
                found[email] = None
        return found

    def _call(self, method: Callable, what: str, **args) -> dict:
        try:
            return within(self._deadline, lambda _: method(**args).data)  # type: ignore[return-value]
        except Overdue:
            raise _Overdue(f"Slack took longer than {self._deadline:g} s to answer") from None
        except SlackApiError as exc:
            error = str(exc.response.get("error") or f"HTTP {exc.response.status_code}")
            if error == "users_not_found":
                raise _NoSuch() from None
            if error == "missing_scope":
                raise LookupFailed(f"Slack answered missing_scope: add the {_SLACK_SCOPES[what]} scope to the app",
                                   variable="SLACK_BOT_TOKEN") from None
            transient = error in _SLACK_TRANSIENT or exc.response.status_code >= 500
            variable = None if transient else "SLACK_BOT_TOKEN"
            raise LookupFailed(f"Slack answered {error}", transient=transient, variable=variable) from None
        except (SlackRequestError, OSError) as exc:
            raise LookupFailed(f"Slack could not be reached ({type(exc).__name__})", transient=True) from None


class _NoSuch(Exception):
    pass


class _Overdue(LookupFailed):
    """A call past its deadline: not made again (it would most likely take as long again)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason, transient=True)


class EntraPeople:
    """Entra users by email, through Microsoft Graph at `graph_url`; `token()` gives a bearer token for it."""

    name = "Teams"

    def __init__(self, token: Callable[[], str], *, graph_url: str = "https://graph.microsoft.com",
                 timeout: float = 10.0, attempts: int = 3, sleep: Callable[[float], None] = time.sleep,
                 deadline: float = DEADLINE) -> None:
        self._token = token
        self.graph_url = graph_url.rstrip("/")
        self._timeout, self._deadline = timeout, deadline
        self._attempts, self._sleep = attempts, sleep

    def __repr__(self) -> str:
        return f"EntraPeople({self.graph_url!r})"

    def users(self, emails: list[str]) -> dict[str, str | None]:
        with self._client() as client:
            return {email: self._id(client, f"users/{quote(email, safe='@')}")
                    or self._first(client, "users", f"mail eq {_literal(email)}") for email in emails}

    def _client(self) -> httpx.Client:
        try:
            token = self._token()
        except Exception as exc:  # noqa: BLE001 - whatever the token provider raises, say only its kind
            raise LookupFailed(f"no Microsoft Graph token ({type(exc).__name__})", transient=True) from None
        return httpx.Client(base_url=self.graph_url + "/v1.0/", timeout=self._timeout, follow_redirects=False,
                            headers={"Authorization": f"Bearer {token}", "Accept": "application/json"})

    def _id(self, client: httpx.Client, path: str) -> str | None:
        body = self._get(client, path, {"$select": "id"})
        return None if body is None else str(body["id"])

    def _first(self, client: httpx.Client, path: str, condition: str) -> str | None:
        body = self._get(client, path, {"$filter": condition, "$select": "id"})
        found = (body or {}).get("value") or []
        if len(found) > 1:  # two users of one address: which one Confluence meant cannot be told
            _log.warning("Microsoft Graph has %d %s matching %s; none is used", len(found), path, condition)
            return None
        return str(found[0]["id"]) if found else None

    def _get(self, client: httpx.Client, path: str, params: dict[str, str]) -> dict | None:
        retrying = Retrying(stop=stop_after_attempt(self._attempts), wait=_wait, sleep=self._sleep, reraise=True,
                            retry=retry_if_exception(_worth_again))
        return retrying(self._get_once, client, path, params)

    def _get_once(self, client: httpx.Client, path: str, params: dict[str, str]) -> dict | None:
        try:
            response = within(self._deadline, lambda _: client.get(path, params=params))
        except Overdue:
            raise _Overdue(f"Microsoft Graph took longer than {self._deadline:g} s to answer") from None
        except httpx.HTTPError as exc:
            raise LookupFailed(f"Microsoft Graph could not be reached ({type(exc).__name__})", transient=True) from None
        if response.status_code == 404:
            return None
        if response.status_code != 200:
            transient = response.status_code == 429 or response.status_code >= 500
            raise LookupFailed(f"Microsoft Graph answered HTTP {response.status_code}", transient=transient,
                               retry_after=_seconds(response.headers.get("Retry-After")))
        try:
            return response.json()
        except ValueError:
            raise LookupFailed("Microsoft Graph gave an unreadable answer", transient=True) from None


def _seconds(value: str | None) -> float | None:
    try:
        return max(0.0, float(value)) if value else None
    except ValueError:
        return None


def _worth_again(exc: BaseException) -> bool:
    return (isinstance(exc, LookupFailed) and not isinstance(exc, _Overdue) and exc.transient
            and (exc.retry_after or 0) <= MAX_WAIT)


def _wait(state: RetryCallState) -> float:
    failed = state.outcome.exception() if state.outcome else None
    asked = getattr(failed, "retry_after", None)
    return asked if asked is not None else wait_exponential(multiplier=0.5, max=MAX_WAIT)(state)


def _literal(value: str) -> str:
    """An OData string literal."""
    return "'" + value.replace("'", "''") + "'"
