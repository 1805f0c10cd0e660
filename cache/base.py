"""The cache interface shared by the Redis and in-process backends, with hit/miss counters."""

from __future__ import annotations

import hashlib
import threading
from collections import Counter
from dataclasses import dataclass, field
from typing import Protocol

KEY_PREFIX = "aie:v1"
# De-duplication marks and conversation records: a prefix of their own, apart from the answer cache's keys.
STATE_PREFIX = "aie:state:v1"


def cache_key(namespace: str, *parts: object) -> str:
    """A compact key: namespace in clear (for debugging), the parts hashed."""
    digest = hashlib.sha256("\x1f".join(str(p) for p in parts).encode("utf-8")).hexdigest()[:32]
    return f"{KEY_PREFIX}:{namespace}:{digest}"


@dataclass
class CacheStats:
    hits: Counter[str] = field(default_factory=Counter)
    misses: Counter[str] = field(default_factory=Counter)
    errors: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def record(self, namespace: str, hit: bool) -> None:
        with self._lock:
            (self.hits if hit else self.misses)[namespace] += 1

    def counts(self) -> dict[str, object]:
        with self._lock:
            names = sorted(set(self.hits) | set(self.misses))
            return {
                "namespaces": {n: {"hits": self.hits[n], "misses": self.misses[n]} for n in names},
                "errors": self.errors,
            }


class Cache(Protocol):
    """Bytes in, bytes out, with a time to live. Failures never raise: a broken cache is a slow cache."""

    stats: CacheStats

    @property
    def backend(self) -> str: ...

    def get(self, namespace: str, key: str) -> bytes | None: ...

    def set(self, namespace: str, key: str, value: bytes, ttl: int) -> None: ...

    def get_many(self, namespace: str, keys: list[str]) -> list[bytes | None]:
        """`get` of each key, in one round trip."""
        ...

    def set_many(self, namespace: str, values: dict[str, bytes], ttl: int) -> None:
        """`set` of each key, in one round trip."""
        ...

    def add(self, key: str, value: bytes, ttl: int) -> bool:
        """Set only if absent (Redis SET NX); True when this call set it. For de-duplication."""
        ...

    def push(self, namespace: str, key: str, value: bytes, keep: int, ttl: int) -> None:
        """Append `value` to the list at `key`, keep its last `keep` items and renew its ttl, as one atomic
        step: concurrent pushes never lose one another."""
        ...

    def items(self, namespace: str, key: str) -> list[bytes]:
        """The list at `key`, oldest first ([] when absent)."""
        ...
