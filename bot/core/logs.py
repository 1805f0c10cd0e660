"""Structured logs: one JSON object per line, carrying the id of the event or activity being served."""

from __future__ import annotations

import contextvars
import json
import logging
import time

event_id_var: contextvars.ContextVar[str] = contextvars.ContextVar("event_id", default="")


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "time": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created)) + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        event_id = getattr(record, "event_id", "") or event_id_var.get()
        if event_id:
            entry["event_id"] = event_id
        if record.exc_info:
            entry["error"] = self.formatException(record.exc_info)
        return json.dumps(entry, ensure_ascii=False)


def configure(level: str = "INFO") -> None:
    handler = logging.StreamHandler()
    handler.setFormatter(JsonFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
