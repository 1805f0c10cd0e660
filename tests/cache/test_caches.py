"""Both cache backends against the real thing: a real redis-server process per test that needs one."""

from __future__ import annotations

import logging
import time

import pytest

from cache import MemoryCache, RedisCache, cache_key, make_cache, make_state_store
from tests.processes import free_port


@pytest.fixture(params=["memory", "redis"])
def cache(request, redis_process):
    return MemoryCache() if request.param == "memory" else RedisCache(redis_process.url)


def test_get_set_and_counters(cache):
    key = cache_key("rewrite", "v1", "model", "出差吃饭能报多少")
    assert cache.get("rewrite", key) is None
    cache.set("rewrite", key, "差旅 伙食补助 标准".encode(), ttl=60)
    assert cache.get("rewrite", key).decode() == "差旅 伙食补助 标准"
    assert cache.stats.counts()["namespaces"]["rewrite"] == {"hits": 1, "misses": 1}


def test_many_keys_are_read_and_written_at_once_with_each_one_counted(cache):
    keys = [cache_key("query-embedding", "v1", "model", word) for word in ("wife", "spouse", "bus")]
    cache.set_many("query-embedding", {keys[0]: b"w", keys[2]: b"b"}, ttl=60)
    assert cache.get_many("query-embedding", keys) == [b"w", None, b"b"]
    assert cache.get("query-embedding", keys[2]) == b"b"
    assert cache.get_many("query-embedding", []) == []
    assert cache.stats.counts()["namespaces"]["query-embedding"] == {"hits": 3, "misses": 1}


def test_entries_expire(cache):
    key = cache_key("embed", "q")
    cache.set("embed", key, b"x", ttl=1)
    time.sleep(1.2)
    assert cache.get("embed", key) is None


def test_add_is_set_if_absent(cache):
    key = cache_key("event", "Ev123")
    assert cache.add(key, b"1", ttl=60) is True
    assert cache.add(key, b"1", ttl=60) is False


def test_keys_differ_by_every_part():
    assert cache_key("r", "v1", "q") != cache_key("r", "v2", "q") != cache_key("e", "v1", "q")


def test_memory_cache_evicts_least_recently_used():
    cache = MemoryCache(max_entries=2)
    for name in "abc":
        cache.set("n", name, name.encode(), ttl=60)
    assert cache.get("n", "a") is None and cache.get("n", "c") == b"c"


def test_redis_down_then_back(redis_process, caplog):
    cache = RedisCache(redis_process.url, retry_after=0.5)
    cache.set("rewrite", "k", b"v", ttl=60)
    redis_process.stop()
    with caplog.at_level(logging.WARNING, logger="cache.redis_cache"):
        began = time.perf_counter()
        for _ in range(20):
            assert cache.get("rewrite", "k") is None
            assert cache.get_many("rewrite", ["k", "k2"]) == [None, None]
            cache.set("rewrite", "k2", b"v2", ttl=60)
            cache.set_many("rewrite", {"k4": b"v4"}, ttl=60)
        assert time.perf_counter() - began < 2.0, "a dead Redis is skipped, not waited on every call"
        assert cache.add("event", b"1", ttl=60) is True and cache.add("event", b"1", ttl=60) is False
    warnings = [r for r in caplog.records if "unavailable" in r.getMessage()]
    assert len(warnings) == 1
    redis_process.start()  # same port, empty (no persistence)
    time.sleep(0.6)
    cache.set("rewrite", "k3", b"v3", ttl=60)
    assert cache.get("rewrite", "k3") == b"v3", "Redis coming back is picked up"


def test_make_cache_picks_the_backend(redis_process):
    assert make_cache(None).backend == "memory"
    assert make_cache(redis_process.url).backend == "redis"
    unreachable = make_cache(f"redis://127.0.0.1:{free_port()}/0")
    assert unreachable.backend == "redis" and unreachable.get("x", "y") is None


def test_redis_credentials_never_reach_the_log(caplog):
    url = f"redis://:s3cret@127.0.0.1:{free_port()}/0?password=s3cret"
    with caplog.at_level(logging.DEBUG):
        cache = make_cache(url)
        cache.get("rewrite", "k")
        make_state_store(url).add("event", b"1", ttl=60)
    assert "s3cret" not in caplog.text
    assert "redis://***@127.0.0.1" in caplog.text and "password=***" in caplog.text


def test_a_full_redis_still_serves_what_it_holds(caplog):
    from tests.bot.test_redis_full import fill
    from tests.processes import RedisProcess, free_port

    server = RedisProcess(free_port(), "--maxmemory", "4mb", "--maxmemory-policy", "noeviction")
    server.start()
    try:
        cache = RedisCache(server.url)
        key = cache_key("candidates", "held")
        cache.set("candidates", key, b"hit", ttl=60)
        fill(server.url)
        with caplog.at_level("WARNING", logger="cache.redis_cache"):
            cache.set("candidates", cache_key("candidates", "new"), b"refused", ttl=60)
            cache.set_many("candidates", {cache_key("candidates", "newer"): b"refused"}, ttl=60)
            assert cache.get("candidates", key) == b"hit", "a refused write does not make Redis look down"
            assert cache.get_many("candidates", [key, cache_key("candidates", "newer")]) == [b"hit", None]
            assert cache.get("candidates", cache_key("candidates", "new")) is None
        assert [r.getMessage().split(" (")[0] for r in caplog.records] == [f"Redis at {server.url} is out of memory"]
    finally:
        server.stop()
