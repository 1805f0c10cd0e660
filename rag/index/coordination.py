"""What replicas of the bot share through Redis besides caches: the reindex lock and the index version.

`RedisIndexLock` lets one reindex run at a time across every process on one Redis (redis-py's `Lock`). It
expires unless its holder renews it, so a holder that crashed blocks the next reindex for `ttl` seconds at most.
`VersionChannel` announces a newly published index version (a key, for whoever starts later or missed the
message, and a pub/sub message, for those listening) and watches for announcements. Neither cares how the
index is stored: they carry a version string.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable

import redis
from redis.exceptions import LockError, LockNotOwnedError

from cache.base import KEY_PREFIX
from cache.redis_cache import redact_url
from rag.index.snapshot import IndexBusyError

_log = logging.getLogger(__name__)

def whoami() -> str:
    """This process, as another replica's admin should read it."""
    return f"{socket.gethostname()} (pid {os.getpid()})"


def _client(url: str, timeout: float = 2.0) -> redis.Redis:
    return redis.Redis.from_url(url, socket_timeout=timeout, socket_connect_timeout=timeout,
                                health_check_interval=0, decode_responses=True)


class RedisIndexLock:
    """A context manager: the one reindex allowed on this knowledge base, across every replica (redis-py's
    `Lock`, whose token also says who holds it and since when, for the admin who finds it taken)."""

    def __init__(self, url: str, index_id: str, holder: str, ttl: float = 30.0) -> None:
        self.url, self.key, self.ttl = url, f"{KEY_PREFIX}:reindex-lock:{index_id}", ttl
        self.holder = holder
        self._client = _client(url)
        self._lock = self._client.lock(self.key, timeout=ttl, blocking=False, thread_local=False)
        self._stop = threading.Event()
        self._renewer: threading.Thread | None = None
        self.lost = False  # the lock expired or was taken while held: the build must not publish

    def __enter__(self) -> RedisIndexLock:
        token = json.dumps({"holder": self.holder, "since": time.time(), "token": uuid.uuid4().hex})
        try:
            taken = self._lock.acquire(token=token)
            current = None if taken else self._client.get(self.key)
        except redis.RedisError:
            raise IndexBusyError(f"the reindex lock could not be taken: Redis at {redact_url(self.url)} is not "
                                 "answering") from None
        if not taken:
            raise IndexBusyError("a reindex is already running", holder=_describe(current))
        self._stop.clear()
        self._renewer = threading.Thread(target=self._renew, name="reindex-lock", daemon=True)
        self._renewer.start()
        return self

    def _renew(self) -> None:
        while not self._stop.wait(self.ttl / 3):
            try:
                if not self._extend():
                    return
            except redis.RedisError as exc:
                _log.warning("could not renew the reindex lock (%s); retrying", type(exc).__name__)

    def _extend(self) -> bool:
        """Renew the lock if this run still holds it; once it does not, `lost` stays set."""
        if self.lost:
            return False
        try:
            self._lock.reacquire()  # its time to live back to `ttl`, if the token is still ours
        except LockNotOwnedError:
            self.lost = True
            _log.error("the reindex lock expired or was taken while this reindex was running; it will not publish")
        return not self.lost

    def confirm(self) -> bool:
        """Whether this run still holds the lock, asked of Redis now (and renewed): False when it expired,
        was deleted or another holder took it, or Redis cannot say — then publishing could race another run."""
        try:
            return self._extend()
        except redis.RedisError as exc:
            _log.error("could not confirm the reindex lock before publishing (%s)", type(exc).__name__)
            return False

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._renewer is not None:
            self._renewer.join(5)
        try:
            self._lock.release()
        except LockError:  # expired or taken: nothing of ours to release
            pass
        except redis.RedisError as error:  # it expires by itself
            _log.warning("could not release the reindex lock (%s); it expires in %.0f s", type(error).__name__,
                         self.ttl)


def _describe(value: str | None) -> str | None:
    try:
        data = json.loads(value or "")
        since = time.strftime("%H:%M UTC", time.gmtime(float(data["since"])))
        return f"{data['holder']} at {since}"
    except (ValueError, KeyError, TypeError):
        return None


class VersionChannel:
    """The index version every replica should serve, announced by the one that published it."""

    def __init__(self, url: str, index_id: str) -> None:
        self.url = url
        self.key = self.channel = f"{KEY_PREFIX}:index-version:{index_id}"
        self._client = _client(url)

    def announce(self, version: str) -> bool:
        """Tell every replica (False when Redis is unreachable: they still switch on their next check)."""
        try:
            self._client.set(self.key, version)
            self._client.publish(self.channel, version)
            return True
        except redis.RedisError as exc:
            _log.warning("could not announce index version %s (%s)", version, type(exc).__name__)
            return False

    def announced(self) -> str | None:
        try:
            return self._client.get(self.key)
        except redis.RedisError:
            return None

    def watch(self, on_version: Callable[[str], None], stop: threading.Event,
              every: float = 5.0) -> threading.Thread:
        """Call `on_version` (in a thread of its own) with each version announced from now on; the key is
        also read every `every` seconds, so a message lost while Redis was away is not missed for long."""
        thread = threading.Thread(target=self._watch, args=(on_version, stop, every), name="index-version",
                                  daemon=True)
        thread.start()
        return thread

    def _watch(self, on_version: Callable[[str], None], stop: threading.Event, every: float) -> None:
        seen = self.announced()
        while not stop.is_set():
            pubsub = self._client.pubsub(ignore_subscribe_messages=True)
            try:
                pubsub.subscribe(self.channel)
                checked = time.monotonic()
                while not stop.is_set():
                    message = pubsub.get_message(timeout=1.0)
                    version = message["data"] if message else None
                    if version is None and time.monotonic() - checked >= every:
                        version, checked = self._client.get(self.key), time.monotonic()
                    if version and version != seen:
                        seen = version
                        _switch(on_version, version)
            except redis.RedisError as exc:
                _log.debug("index version watch interrupted (%s); reconnecting", type(exc).__name__)
                stop.wait(every)
            finally:
                pubsub.close()


def _switch(on_version: Callable[[str], None], version: str) -> None:
    try:
        on_version(version)
    except Exception:  # noqa: BLE001 - the next announcement or question tries again
        _log.exception("could not switch to index version %s", version)
