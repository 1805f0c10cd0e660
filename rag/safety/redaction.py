"""Credentials out of text that is shown or logged: the user:password part of a URL, and known secrets."""

from __future__ import annotations

import re
from collections.abc import Iterable

_USERINFO = re.compile(r"(\b[a-zA-Z][a-zA-Z0-9+.-]*://)[^/@\s'\"]*@")


def redact(text: str, secrets: Iterable[str | None] = ()) -> str:
    """`text` without the user:password part of any URL nor any of `secrets`."""
    text = _USERINFO.sub(r"\1***@", text)
    for secret in secrets:
        if secret:
            text = text.replace(secret, "***")
    return text
