"""Structured logs: one JSON object per line, carrying the id of the event or activity being served."""

from __future__ import annotations

import contextvars
import json
import logging
import re
import time

from rag.safety.redaction import redact

event_id_var: contextvars.ContextVar[str] = contextvars.ContextVar("event_id", default="")


# Credentials as an error's text may carry them: an Authorization header's value, a Slack token (an HTTP
# client error's repr holds its request's headers)
_CREDENTIAL = re.compile(r"(?i)\b(bearer|basic)\s+[\w.~+/=-]{6,}|\bxox[a-z]-[\w-]+")


def redacted(text: str) -> str:
    """`text` with every credential it holds written as ***, a URL's user and password too."""
    return _CREDENTIAL.sub(lambda m: f"{m.group(1)} ***" if m.group(1) else "***", redact(text))


def described(exc: BaseException) -> str:
    """An exception for a log line: its type and message, never its repr (an HTTP client error's repr holds
    the request's headers, its Authorization among them)."""
    return redacted(f"{type(exc).__name__}: {exc}")


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "time": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created)) + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": redacted(record.getMessage()),
        }
        event_id = getattr(record, "event_id", "") or event_id_var.get()
        if event_id:
            entry["event_id"] = event_id
        if record.exc_info:
            entry["error"] = redacted(self.formatException(record.exc_info))
        return json.dumps(entry, ensure_ascii=False)


def configure(level: str = "INFO") -> None:
    handler = logging.StreamHandler()
    handler.setFormatter(JsonFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
