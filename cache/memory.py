"""In-process cache: the default when no Redis is configured (one process, lost on restart)."""

from __future__ import annotations

import threading
import time

from cachetools import TLRUCache

from cache.base import CacheStats

Item = tuple[float, "bytes | tuple[bytes, ...]"]  # (expires, value): a value is bytes, or a tuple of them for a list


class MemoryCache:
    def __init__(self, max_entries: int = 20_000) -> None:
        if max_entries <= 0:
            raise ValueError("max_entries must be positive")
        self.stats = CacheStats()
        # Least recently used first out; each item expires at its own time (its ttl).
        self._items: TLRUCache[str, Item] = TLRUCache(max_entries, ttu=lambda _key, item, _now: item[0],
                                                      timer=time.monotonic)
        self._lock = threading.Lock()

    @property
    def backend(self) -> str:
        return "memory"

    def _live(self, key: str, now: float) -> bytes | tuple[bytes, ...] | None:
        item = self._items.get(key)
        return None if item is None or item[0] <= now else item[1]

    def get(self, namespace: str, key: str) -> bytes | None:
        with self._lock:
            value = self._live(key, time.monotonic())
        value = value if isinstance(value, bytes) else None  # a list is read with `items`
        self.stats.record(namespace, value is not None)
        return value

    def set(self, namespace: str, key: str, value: bytes, ttl: int) -> None:
        with self._lock:
            self._store(key, (time.monotonic() + ttl, value))

    def get_many(self, namespace: str, keys: list[str]) -> list[bytes | None]:
        return [self.get(namespace, key) for key in keys]

    def set_many(self, namespace: str, values: dict[str, bytes], ttl: int) -> None:
        for key, value in values.items():
            self.set(namespace, key, value, ttl)

    def push(self, namespace: str, key: str, value: bytes, keep: int, ttl: int) -> None:
        with self._lock:
            now = time.monotonic()
            current = self._live(key, now)
            listed = current if isinstance(current, tuple) else ()
            self._store(key, (now + ttl, (*listed, value)[-keep:]))

    def items(self, namespace: str, key: str) -> list[bytes]:
        with self._lock:
            value = self._live(key, time.monotonic())
        self.stats.record(namespace, value is not None)
        return list(value) if isinstance(value, tuple) else []

    def _store(self, key: str, item: Item) -> None:
        self._items[key] = item

    def add(self, key: str, value: bytes, ttl: int) -> bool:
        with self._lock:
            now = time.monotonic()
            if self._live(key, now) is not None:
                return False
            self._store(key, (now + ttl, value))
            return True
