"""Libraries that talk at import time (faiss: which CPU build it loads; jieba: building its dictionary), or
at every start and token (the Agents SDK: its connection settings, "Acquiring token …"), speak at debug
level here: a user sees none of it unless AIE_LOG_LEVEL=DEBUG."""

from __future__ import annotations

import logging

NOISY = ("faiss.loader", "jieba", "microsoft_agents.hosting.core.authorization.connection_manager",
         "microsoft_agents.authentication.msal.msal_auth")


def _to_debug(record: logging.LogRecord) -> bool:
    if record.levelno > logging.INFO:
        return True  # their warnings and errors stay what they are
    record.levelno, record.levelname = logging.DEBUG, "DEBUG"
    return logging.getLogger().isEnabledFor(logging.DEBUG)


def quiet_libraries() -> None:
    """On the loggers themselves (not on a handler): the filter outlives a later change of handlers (serve's
    JSON log) and covers a handler of the library's own (jieba writes to stderr itself)."""
    for name in NOISY:
        logger = logging.getLogger(name)
        if _to_debug not in logger.filters:
            logger.addFilter(_to_debug)
