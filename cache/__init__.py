"""Caches for the answering pipeline: Redis when REDIS_URL is set, in-process otherwise."""

from __future__ import annotations

import logging

from cache.base import Cache, CacheStats, cache_key
from cache.memory import MemoryCache
from cache.redis_cache import RedisCache

__all__ = ["Cache", "CacheStats", "MemoryCache", "RedisCache", "cache_key", "make_cache"]

_log = logging.getLogger(__name__)


def make_cache(redis_url: str | None) -> Cache:
    """Redis when a URL is given (even if it is down right now: it is retried), else in-process."""
    if not redis_url:
        _log.info("REDIS_URL not set: using an in-process cache")
        return MemoryCache()
    cache = RedisCache(redis_url)
    if not cache.ping():
        _log.warning("Redis at %s is not answering; answers continue uncached until it is back", redis_url)
    return cache
