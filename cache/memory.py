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
        self._items: OrderedDict[str, tuple[float, bytes]] = OrderedDict()
        self._lock = threading.Lock()

    @property
    def backend(self) -> str:
        return "memory"

    def _live(self, key: str, now: float) -> bytes | None:
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
        self.stats.record(namespace, value is not None)
        return value

    def set(self, namespace: str, key: str, value: bytes, ttl: int) -> None:
        with self._lock:
            self._items[key] = (time.monotonic() + ttl, value)
            self._items.move_to_end(key)
            while len(self._items) > self._max:
                self._items.popitem(last=False)

    def add(self, key: str, value: bytes, ttl: int) -> bool:
        with self._lock:
            now = time.monotonic()
            if self._live(key, now) is not None:
                return False
            self._items[key] = (now + ttl, value)
            while len(self._items) > self._max:
                self._items.popitem(last=False)
            return True
