"""Whether Slack accepts the bot token: one `auth.test` call, as `serve` starts."""

from __future__ import annotations

import asyncio
import logging
from urllib.parse import urlsplit

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.core.credentials import CHECK_TIMEOUT, OK, Credentials, invalid, unverified

_log = logging.getLogger(__name__)

# auth.test's documented errors for a token that will not work as it is; the others (ratelimited,
# fatal_error, service_unavailable, …) say nothing of the token.
REFUSED = frozenset({"invalid_auth", "not_authed", "account_inactive", "token_revoked", "token_expired",
                     "not_allowed_token_type", "no_permission", "access_denied", "ekm_access_denied",
                     "enterprise_is_restricted", "org_login_required", "two_factor_setup_required"})


async def check_bot_token(token: str, api_url: str, timeout: float = CHECK_TIMEOUT) -> Credentials:
    client = AsyncWebClient(token=token, base_url=api_url, timeout=int(timeout) or 1, retry_handlers=[])
    try:
        identity = await asyncio.wait_for(client.auth_test(), timeout)
    except SlackApiError as exc:
        error = exc.response.get("error") if isinstance(exc.response.data, dict) else None
        if error in REFUSED:
            return invalid(error)
        return unverified(f"auth.test answered {error or f'HTTP {exc.response.status_code}'}")
    except (asyncio.TimeoutError, TimeoutError):
        return unverified(f"Slack did not answer auth.test within {timeout:.0f} s")
    except Exception as exc:  # noqa: BLE001 - connection refused, DNS, TLS…: Slack could not be asked
        return unverified(f"cannot reach {urlsplit(api_url).netloc}: {type(exc).__name__}")
    _log.info("Slack accepted the bot token: @%s in workspace %s", identity.get("user"), identity.get("team"))
    return OK
