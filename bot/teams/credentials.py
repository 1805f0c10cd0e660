"""Whether Entra issues the bot its token: the one the SDK asks for to reply (client credentials against the
configured authority, through the SDK's own MSAL provider, so its token cache starts warm)."""

from __future__ import annotations

import asyncio
import logging
import re
from urllib.parse import urlsplit

from microsoft_agents.hosting.core.authorization import AuthenticationConstants, Connections

from bot.core.credentials import CHECK_TIMEOUT, OK, Credentials, invalid, unverified

_log = logging.getLogger(__name__)
# The SDK logs Entra's whole answer at ERROR when a token is refused; the check says it in one line of its own.
_sdk_log = logging.getLogger("microsoft_agents.authentication.msal.msal_auth")

SCOPE = AuthenticationConstants.AGENTS_SDK_SCOPE  # the Bot Connector's, as for every reply
# Entra's error codes that say nothing of the registration: ask again later.
TRANSIENT = frozenset({"temporarily_unavailable", "server_error"})
_ERROR = re.compile(r"""["']error["']\s*:\s*["']([a-z_]+)["']""")
_AADSTS = re.compile(r"AADSTS\d+")


async def check_registration(connections: Connections, timeout: float = CHECK_TIMEOUT) -> Credentials:
    provider = connections.get_default_connection()
    quiet = _Refusals()
    _sdk_log.addFilter(quiet)
    try:
        await asyncio.wait_for(provider.get_access_token(SCOPE, [f"{SCOPE}/.default"]), timeout)
    except (asyncio.TimeoutError, TimeoutError):
        return unverified(f"Entra did not issue a token within {timeout:.0f} s")
    except ValueError as exc:  # MSAL's answer from Entra, or its tenant discovery failing
        return refusal(f"{exc} {exc.__context__ or ''}")  # a failed tenant discovery: Entra's answer is the context
    except Exception as exc:  # noqa: BLE001 - connection refused, DNS, TLS…: Entra could not be asked
        return unverified(f"cannot reach {_host(provider)}: {type(exc).__name__}")
    finally:
        _sdk_log.removeFilter(quiet)
    _log.info("Entra issued the Teams bot its token")
    return OK


def _host(provider) -> str:
    authority = getattr(getattr(provider, "configuration", None), "AUTHORITY", None)
    return urlsplit(authority).netloc if authority else "login.microsoftonline.com"


class _Refusals(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith("Failed to acquire token")


def refusal(message: str) -> Credentials:
    """What an SDK / MSAL error says, by Entra's error code and AADSTS number only (the message quotes
    Entra's whole answer: trace ids, the app id, sometimes more)."""
    code, number = _ERROR.search(message), _AADSTS.search(message)
    if code is None:
        if "authority configuration" in message:  # MSAL's tenant discovery failed (HTTP 4xx)
            return invalid("the tenant was not found" + (f": {number.group()}" if number else ""))
        return unverified("unexpected answer from the token service")
    reason = code.group(1) + (f": {number.group()}" if number else "")
    return unverified(reason) if code.group(1) in TRANSIENT else invalid(reason)
