"""Redis-backed cache. Redis down → one warning, calls skip Redis for a while, then it is tried again.
Redis full (`maxmemory` reached under `noeviction`: it refuses writes, still answers reads) → one warning,
writes are skipped, reads go on.

`add` (SET NX) falls back to an in-process cache while Redis is away or full, so de-duplication keeps
working within this process; while Redis is full, a mark it already holds still counts.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from urllib.parse import urlsplit, urlunsplit

import redis

from cache.base import KEY_PREFIX, CacheStats
from cache.memory import MemoryCache

_log = logging.getLogger(__name__)

# Every cache on one Redis (the answers', the de-duplication marks') notices an outage: the process says so once.
_outages: set[str] = set()
_outages_lock = threading.Lock()


def _outage_begins(url: str) -> bool:
    with _outages_lock:
        known = url in _outages
        _outages.add(url)
        return not known


def _outage_ends(url: str) -> bool:
    with _outages_lock:
        known = url in _outages
        _outages.discard(url)
        return known


class RedisCache:
    def __init__(self, url: str, *, socket_timeout: float = 0.25, retry_after: float = 5.0,
                 key_prefix: str = KEY_PREFIX) -> None:
        self.url = url
        self.key_prefix = key_prefix  # replaces KEY_PREFIX in every key (a store of its own in one keyspace)
        self.stats = CacheStats()
        self._client = redis.Redis.from_url(
            url, socket_timeout=socket_timeout, socket_connect_timeout=socket_timeout, health_check_interval=0
        )
        self._retry_after = retry_after
        self._down_until = 0.0
        self._unreachable = False
        self._full = False
        self._lock = threading.Lock()
        self._fallback = MemoryCache(max_entries=50_000)

    @property
    def backend(self) -> str:
        return "redis"

    @property
    def available(self) -> bool:
        return time.monotonic() >= self._down_until

    def _failed(self, exc: Exception) -> None:
        with self._lock:
            self.stats.errors += 1
            self._down_until = time.monotonic() + self._retry_after
            if not self._unreachable:
                self._unreachable = True
                if _outage_begins(self.url):
                    _log.warning("Redis at %s unavailable (%s); continuing without it, retrying every %.0f s",
                                 redact_url(self.url), exc, self._retry_after)

    def _refused(self, exc: Exception) -> None:
        """Redis is out of memory: it refused a write but is not down (reads keep working)."""
        with self._lock:
            self.stats.errors += 1
            if not self._full:
                self._full = True
                _log.warning("Redis at %s is out of memory (%s): writes are skipped until it has room; see the "
                             "README on maxmemory and the eviction policy", redact_url(self.url), exc)

    def _stored(self) -> None:
        self._recovered()
        if self._full:
            with self._lock:
                if self._full:
                    self._full = False
                    _log.warning("Redis at %s has room again", redact_url(self.url))

    def _key(self, key: str) -> str:
        if self.key_prefix == KEY_PREFIX or not key.startswith(KEY_PREFIX):
            return key
        return self.key_prefix + key[len(KEY_PREFIX):]

    def _recovered(self) -> None:
        if self._unreachable:
            with self._lock:
                if self._unreachable:
                    self._unreachable = False
                    if _outage_ends(self.url):
                        _log.warning("Redis at %s is back", redact_url(self.url))

    def get(self, namespace: str, key: str) -> bytes | None:
        value = None
        if self.available:
            try:
                value = self._client.get(self._key(key))
                self._recovered()
            except redis.RedisError as exc:
                self._failed(exc)
        self.stats.record(namespace, value is not None)
        return value

    def set(self, namespace: str, key: str, value: bytes, ttl: int) -> None:
        if not self.available:
            return
        try:
            self._client.set(self._key(key), value, ex=max(1, int(ttl)))
            self._stored()
        except redis.OutOfMemoryError as exc:
            self._refused(exc)
        except redis.RedisError as exc:
            self._failed(exc)

    def get_many(self, namespace: str, keys: list[str]) -> list[bytes | None]:
        values: list[bytes | None] = [None] * len(keys)
        if keys and self.available:
            try:
                values = self._client.mget([self._key(k) for k in keys])
                self._recovered()
            except redis.RedisError as exc:
                self._failed(exc)
        for value in values:
            self.stats.record(namespace, value is not None)
        return values

    def set_many(self, namespace: str, values: dict[str, bytes], ttl: int) -> None:
        if not values or not self.available:
            return
        try:
            with self._client.pipeline(transaction=False) as step:
                for key, value in values.items():
                    step.set(self._key(key), value, ex=max(1, int(ttl)))
                step.execute()
            self._stored()
        except redis.OutOfMemoryError as exc:
            self._refused(exc)
        except redis.RedisError as exc:
            self._failed(exc)

    def push(self, namespace: str, key: str, value: bytes, keep: int, ttl: int) -> None:
        if not self.available:
            return
        key = self._key(key)
        try:
            with self._client.pipeline(transaction=True) as step:  # MULTI/EXEC: one step for every client
                step.rpush(key, value).ltrim(key, -keep, -1).expire(key, max(1, int(ttl))).execute()
            self._stored()
        except redis.OutOfMemoryError as exc:
            self._refused(exc)
        except redis.RedisError as exc:
            self._failed(exc)

    def items(self, namespace: str, key: str) -> list[bytes]:
        values: list[bytes] = []
        if self.available:
            try:
                values = self._client.lrange(self._key(key), 0, -1)
                self._recovered()
            except redis.RedisError as exc:
                self._failed(exc)
        self.stats.record(namespace, bool(values))
        return values

    def add(self, key: str, value: bytes, ttl: int) -> bool:
        if self.available:
            try:
                added = bool(self._client.set(self._key(key), value, ex=max(1, int(ttl)), nx=True))
                self._stored()
                return added
            except redis.OutOfMemoryError as exc:
                self._refused(exc)
                if self._holds(key):
                    return False  # marked before Redis filled up (e.g. by another replica)
            except redis.RedisError as exc:
                self._failed(exc)
        return self._fallback.add(key, value, ttl)

    def _holds(self, key: str) -> bool:
        try:
            return bool(self._client.exists(self._key(key)))
        except redis.RedisError as exc:
            self._failed(exc)
            return False

    @property
    def unreachable(self) -> bool:
        """The last call (or `check`) failed to reach Redis: nothing is cached until one succeeds."""
        return self._unreachable

    def check(self) -> bool:
        """Whether Redis answers now; a failure counts (and is told) as any call's would."""
        try:
            reached = bool(self._client.ping())
        except redis.RedisError as exc:
            self._failed(exc)
            return False
        self._recovered()
        return reached


def redact_url(url: str) -> str:
    """The URL without its credentials (user info, `password=` in the query), for logs."""
    parts = urlsplit(url)
    netloc = "***@" + parts.netloc.rsplit("@", 1)[1] if "@" in parts.netloc else parts.netloc
    query = re.sub(r"(?i)(^|&)(password=)[^&]*", r"\1\2***", parts.query)
    if (netloc, query) == (parts.netloc, parts.query):
        return url
    return urlunsplit(parts._replace(netloc=netloc, query=query))
