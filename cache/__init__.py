"""Caches for the answering pipeline: Redis when REDIS_URL is set, in-process otherwise.

The Redis client is imported only when Redis is used (or `RedisCache` is named): a command without
REDIS_URL starts without it."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from cache.base import STATE_PREFIX, Cache, CacheStats, cache_key
from cache.memory import MemoryCache

if TYPE_CHECKING:
    from cache.redis_cache import RedisCache, redact_url

__all__ = ["Cache", "CacheStats", "MemoryCache", "RedisCache", "cache_key", "make_cache", "make_state_store",
           "redact_url"]

_log = logging.getLogger(__name__)


def __getattr__(name: str) -> Any:
    if name in ("RedisCache", "redact_url"):
        from cache import redis_cache

        return getattr(redis_cache, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def make_cache(redis_url: str | None) -> Cache:
    """Redis when a URL is given (even if it is down right now: it is retried), else in-process."""
    if not redis_url:
        _log.info("REDIS_URL not set: using an in-process cache")
        return MemoryCache()
    from cache.redis_cache import RedisCache

    cache = RedisCache(redis_url)
    cache.check()  # down now: one warning (this process gives no other for this outage)
    return cache


def make_state_store(redis_url: str | None, max_entries: int = 200_000) -> Cache:
    """A store for delivery marks and conversation state, apart from the answer cache: Redis when a
    URL is given (shared by every instance; keys under STATE_PREFIX), else in-process (never evicted by
    the answer cache's entries)."""
    if not redis_url:
        return MemoryCache(max_entries=max_entries)
    from cache.redis_cache import RedisCache

    return RedisCache(redis_url, key_prefix=STATE_PREFIX)
