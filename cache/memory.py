"""In-process cache: the default when no Redis is configured (one process, lost on restart)."""

from __future__ import annotations

import threading
import time
from collections import OrderedDict

from cache.base import CacheStats


class MemoryCache:
    def __init__(self, max_entries: int = 20_000) -> None:
        if max_entries <= 0:
            raise ValueError("max_entries must be positive")
        self.stats = CacheStats()
        self._max = max_entries
        # A value is bytes, or a tuple of them for a list (`push`).
        self._items: OrderedDict[str, tuple[float, bytes | tuple[bytes, ...]]] = OrderedDict()
        self._lock = threading.Lock()

    @property
    def backend(self) -> str:
        return "memory"

    def _live(self, key: str, now: float) -> bytes | tuple[bytes, ...] | None:
        item = self._items.get(key)
        if item is None:
            return None
        expires, value = item
        if expires <= now:
            del self._items[key]
            return None
        self._items.move_to_end(key)
        return value

    def get(self, namespace: str, key: str) -> bytes | None:
        with self._lock:
            value = self._live(key, time.monotonic())
        value = value if isinstance(value, bytes) else None  # a list is read with `items`
        self.stats.record(namespace, value is not None)
        return value

    def set(self, namespace: str, key: str, value: bytes, ttl: int) -> None:
        with self._lock:
            self._store(key, (time.monotonic() + ttl, value))

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

    def _store(self, key: str, item: tuple[float, bytes | tuple[bytes, ...]]) -> None:
        self._items[key] = item
        self._items.move_to_end(key)
        while len(self._items) > self._max:
            self._items.popitem(last=False)

    def add(self, key: str, value: bytes, ttl: int) -> bool:
        with self._lock:
            now = time.monotonic()
            if self._live(key, now) is not None:
                return False
            self._store(key, (now + ttl, value))
            return True
