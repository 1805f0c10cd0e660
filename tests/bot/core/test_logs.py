"""The serve command's log lines: one JSON object each, never a credential, whatever an error's text holds."""

from __future__ import annotations

import json
import logging

import aiohttp
from multidict import CIMultiDict, CIMultiDictProxy
from yarl import URL

from bot.core.logs import JsonFormatter, described


def refused_send() -> aiohttp.ClientResponseError:
    """What the HTTP client raises when a connector refuses a reply: it holds the request, headers and all."""
    url = URL("https://smba.example/v3/conversations/a:1/activities")
    headers = CIMultiDictProxy(CIMultiDict({"Authorization": "Bearer eyJhbGciOi.secret-part.sig"}))
    return aiohttp.ClientResponseError(aiohttp.RequestInfo(url, "POST", headers, url), (), status=403,
                                       message="Forbidden")


def line(message: str, *args, error: BaseException | None = None) -> dict:
    record = logging.LogRecord("bot", logging.ERROR, __file__, 1, message, args,
                               (type(error), error, error.__traceback__) if error else None)
    return json.loads(JsonFormatter().format(record))


def test_an_error_is_described_without_the_request_it_carries():
    exc = refused_send()
    assert "secret-part" in repr(exc), "the client's repr holds the header"
    assert described(exc) == "ClientResponseError: 403, message='Forbidden', " \
                             "url='https://smba.example/v3/conversations/a:1/activities'"


def test_no_credential_reaches_a_log_line_even_through_a_repr():
    try:
        raise refused_send()
    except aiohttp.ClientResponseError as exc:
        entry = line("send failed: %r", exc, error=exc)
    assert "secret-part" not in json.dumps(entry) and "Bearer ***" in entry["message"]
    for written in ("token xoxb-1234-5678-abcdef", "remote https://bot:hunter22@git.example/kb.git",
                    "header Authorization: Basic dXNlcjpodW50ZXIy"):
        shown = line("%s", written)["message"]
        assert not any(s in shown for s in ("xoxb-1234", "hunter22", "dXNlcjpodW50ZXIy")), shown
