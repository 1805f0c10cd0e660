"""Who may post to /api/messages: the Agents SDK's validation of the Bot Framework / Entra JWT, with every way
a token can fail — malformed, forged, expired, for another bot or issuer, its keys out of reach — answered 401
at once with one log line (the SDK itself lets some of them escape as a 500 with a traceback)."""

from __future__ import annotations

import asyncio
import logging
import warnings
from collections.abc import Awaitable, Callable

import jwt
from aiohttp import web
from microsoft_agents.hosting.core.authorization import AgentAuthConfiguration
from microsoft_agents.hosting.core.authorization.jwt import JwtTokenValidator

_log = logging.getLogger(__name__)
# Our one line per refusal stands for the SDK's own (it would add a second for a wrong audience or issuer).
logging.getLogger("microsoft_agents.hosting.core.authorization.jwt").setLevel(logging.ERROR)

KEYS_TIMEOUT = 2.0  # seconds to fetch the signing keys (cached afterwards) and check the token
# Checks under way at once. The SDK fetches keys on a thread of the loop's default pool (a stalled keys endpoint
# holds one for 30 s even after our 401); that pool also runs the answers' index and cache work, so a flood of
# tokens while the keys cannot be fetched may park only this many of its threads.
MAX_CHECKS = 3
REFUSED = {"error": "Invalid token or authentication failed."}

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def authorized(handler: Handler, configuration: AgentAuthConfiguration) -> Handler:
    """`handler` for requests with a valid token (or, in anonymous mode, none), with its claims in
    request["claims_identity"] as the SDK's adapter expects; everyone else gets a 401."""

    checks = asyncio.Semaphore(MAX_CHECKS)

    async def check(request: web.Request) -> web.StreamResponse:
        header = request.headers.get("Authorization")
        validator = JwtTokenValidator(configuration)
        if header is None and configuration.ANONYMOUS_ALLOWED:
            _identify(request, validator.get_anonymous_claims())
            return await handler(request)
        token = _bearer(header)
        if token is None:
            return _refused("no bearer token")
        try:
            _identify(request, await _validated(validator, token, checks))
        except Exception as exc:  # noqa: BLE001 - whatever the SDK raises, the caller is not authenticated
            return _refused(reason(exc))
        return await handler(request)

    return check


async def _validated(validator: JwtTokenValidator, token: str, checks: asyncio.Semaphore):
    """The token's claims, within KEYS_TIMEOUT in all; a check slot is held until the SDK's work really ends."""
    if "kid" not in jwt.get_unverified_header(token):  # refused before any key look-up (no thread for it)
        raise KeyError("kid")
    deadline = asyncio.get_running_loop().time() + KEYS_TIMEOUT
    await asyncio.wait_for(checks.acquire(), KEYS_TIMEOUT)
    work = asyncio.ensure_future(validator.validate_token(token))
    work.add_done_callback(lambda done: (checks.release(), done.cancelled() or done.exception()))
    return await asyncio.wait_for(asyncio.shield(work), max(0.0, deadline - asyncio.get_running_loop().time()))


def _identify(request: web.Request, identity) -> None:
    with warnings.catch_warnings():  # the SDK's adapter reads this plain-string key
        warnings.simplefilter("ignore", web.NotAppKeyWarning)
        request["claims_identity"] = identity


def _bearer(header: str | None) -> str | None:
    scheme, _, token = (header or "").strip().partition(" ")
    token = token.strip()
    return token if scheme.lower() == "bearer" and token and " " not in token else None


# Checked in this order: a subclass before its base (PyJWKClientConnectionError is a PyJWKClientError, ...).
_REASONS: tuple[tuple[type[Exception], str], ...] = (
    (TimeoutError, f"the signing keys did not arrive within {KEYS_TIMEOUT:.0f} s"),
    (jwt.PyJWKClientConnectionError, "the signing keys could not be fetched"),
    (KeyError, "the token names no signing key (no kid)"),  # the SDK reads header["kid"]
    (jwt.PyJWKClientError, "no signing key matches the token's kid"),
    (jwt.ExpiredSignatureError, "the token has expired"),
    (jwt.InvalidSignatureError, "the token's signature is not valid"),
    (jwt.DecodeError, "not a JWT"),
)
_SDK_MESSAGES = {"Invalid audience.": "wrong audience", "Invalid issuer.": "wrong issuer"}  # its fixed texts


def reason(exc: Exception) -> str:
    """Why a token was refused, in words that show nothing of the token."""
    for kind, why in _REASONS:
        if isinstance(exc, kind):
            return why
    return _SDK_MESSAGES.get(str(exc), type(exc).__name__) if isinstance(exc, ValueError) else type(exc).__name__


def _refused(why: str) -> web.Response:
    _log.warning("Teams request refused (401): %s", why)
    return web.json_response(REFUSED, status=401)
