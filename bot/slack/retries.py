"""Slack's rate limits: a call answered 429 is retried after its Retry-After, waited at most MAX_WAIT seconds
(as for Teams' connector), and an answer waiting it out lends its answer slot to the next question."""

from __future__ import annotations

import asyncio
import logging

from slack_sdk.http_retry.builtin_async_handlers import AsyncRateLimitErrorRetryHandler
from slack_sdk.http_retry.request import HttpRequest
from slack_sdk.http_retry.response import HttpResponse
from slack_sdk.http_retry.state import RetryState

from bot.core.answering import slot_lent

_log = logging.getLogger(__name__)
MAX_WAIT = 10.0


def retry_after(response: HttpResponse) -> float:
    """Seconds Slack asks to wait, within [0, MAX_WAIT] (1 when it does not say)."""
    value = next((v for k, v in response.headers.items() if k.lower() == "retry-after"), "1")
    if isinstance(value, list):  # slack_sdk's own HTTP responses keep a list per header; aiohttp's a string
        value = value[0] if value else "1"
    try:
        return min(MAX_WAIT, max(0.0, float(value)))
    except ValueError:
        return 1.0


class RateLimitRetries(AsyncRateLimitErrorRetryHandler):
    async def prepare_for_next_attempt_async(self, *, state: RetryState, request: HttpRequest,
                                             response: HttpResponse | None = None,
                                             error: Exception | None = None) -> None:
        if response is None:
            raise error  # type: ignore[misc] - as slack_sdk's own handler
        state.next_attempt_requested = True
        wait = retry_after(response)
        _log.warning("Slack rate limited %s; retrying in %.1f s", request.url.rsplit("/", 1)[-1], wait)
        async with slot_lent():
            await asyncio.sleep(wait)
        state.increment_current_attempt()
