"""What each chat platform said of the bot's credentials when `serve` started: accepted, refused, or not
known yet (the platform could not be reached). A refused credential never starts working by itself; an
unverified one is checked again while the server runs, so /ready turns 200 once the platform answers."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Literal

_log = logging.getLogger(__name__)

CHECK_TIMEOUT = 5.0  # seconds for one surface's check (one HTTP exchange, two for Entra's first token)
RECHECK_SECONDS = 10.0  # how often an unverified credential is tried again (about a probe's period)


@dataclass(frozen=True)
class Credentials:
    state: Literal["ok", "invalid", "unverified"]
    reason: str = ""  # the platform's error code, or why it could not be asked; never a secret

    @property
    def ok(self) -> bool:
        return self.state == "ok"

    @property
    def shown(self) -> str:
        """As /ready and the log show it: "ok", "invalid credentials (invalid_auth)", "unverified (…)"."""
        if self.ok:
            return "ok"
        return f"{'invalid credentials' if self.state == 'invalid' else 'unverified'} ({self.reason})"


OK = Credentials("ok")


def invalid(reason: str) -> Credentials:
    return Credentials("invalid", reason)


def unverified(reason: str) -> Credentials:
    return Credentials("unverified", reason)


Check = Callable[[], Awaitable[Credentials]]


class CredentialStatus:
    """The latest result per surface ("slack", "teams"); unverified ones are checked again in the background."""

    def __init__(self, results: dict[str, Credentials], checks: dict[str, Check]) -> None:
        self.results = dict(results)
        self._checks = checks  # only the served surfaces: a refused one is not served, so never re-checked
        self._last = time.monotonic()
        self._running: asyncio.Task | None = None

    @property
    def ok(self) -> bool:
        return all(result.ok for result in self.results.values())

    def shown(self) -> dict[str, str]:
        return {surface: result.shown for surface, result in self.results.items()}

    def recheck_if_due(self) -> None:
        """Start checking the unverified surfaces again (without waiting) when the last try is old enough."""
        due = [s for s, r in self.results.items() if r.state == "unverified" and s in self._checks]
        if not due or (self._running and not self._running.done()) or time.monotonic() - self._last < RECHECK_SECONDS:
            return
        self._last = time.monotonic()
        self._running = asyncio.ensure_future(self._recheck(due))

    async def _recheck(self, surfaces: list[str]) -> None:
        for surface, result in zip(surfaces, await asyncio.gather(*(self._checks[s]() for s in surfaces))):
            self.results[surface] = result
            if result.ok:
                _log.info("%s credentials verified", surface.capitalize())
            elif result.state == "invalid":
                _log.error("%s refused the credentials: %s", surface.capitalize(), result.shown)
