"""A Redis that is full (`maxmemory` reached with `noeviction`: writes refused, reads answered) costs neither
a crash nor a second answer: de-duplication marks it already holds still count, new ones are kept in process."""

from __future__ import annotations

import logging
import time

import pytest
import redis

from tests.bot.harness import start_bot, wait_for
from tests.bot.slack.test_bot import final_answers, mention
from tests.processes import RedisProcess, free_port


@pytest.fixture
def full_redis():
    server = RedisProcess(free_port(), "--maxmemory", "4mb", "--maxmemory-policy", "noeviction")
    server.start()
    yield server
    server.stop()


def fill(url: str) -> int:
    """Write answer-cache-like entries until Redis refuses one; then keep it full, below what it holds (its
    used memory moves a little with every request). How many were written."""
    client = redis.Redis.from_url(url)
    for written in range(100_000):
        try:
            client.set(f"aie:v1:candidates:filler-{written}", b"x" * 20_000, ex=3600)
        except redis.OutOfMemoryError:
            client.config_set("maxmemory", client.info("memory")["used_memory"] - 500_000)
            return written
    raise AssertionError("Redis never filled up: is maxmemory set?")


def test_a_full_redis_neither_crashes_nor_answers_twice(handbook_index, slack, tmp_path, full_redis, caplog):
    data_dir, index_dir = handbook_index
    bot = start_bot(data_dir, index_dir, slack.base_url, gate_threshold=0.85, redis_url=full_redis.url,
                    feedback_db=tmp_path / "feedback.sqlite3")
    caplog.set_level(logging.WARNING, logger="cache.redis_cache")
    try:
        before = mention(slack, "How long must a password be?")
        assert bot.event(before, event_id="EvBEFORE0001").status_code == 200
        wait_for(lambda: final_answers(slack))
        assert fill(full_redis.url) > 0

        retried = bot.event(before, event_id="EvBEFORE0001", headers={"X-Slack-Retry-Num": "1"})
        during = mention(slack, "When are the offices open?")
        statuses = [retried.status_code, bot.event(during, event_id="EvDURING0001").status_code,
                    bot.event({**during, "type": "message", "channel_type": "channel"},
                              event_id="EvDURING0002").status_code,  # Slack's twin of the mention
                    bot.event(during, event_id="EvDURING0001", headers={"X-Slack-Retry-Num": "1"}).status_code]
        wait_for(lambda: len(final_answers(slack)) >= 2)
        time.sleep(2)
    finally:
        bot.stop()
    assert statuses == [200, 200, 200, 200]
    answered = sorted(c.args["thread_ts"] for c in slack.calls_to("chat.startStream"))
    assert answered == sorted([before["ts"], during["ts"]]), "each question answered exactly once"
    full = [r.getMessage() for r in caplog.records if "out of memory" in r.getMessage()]
    assert full and all("Redis at redis://127.0.0.1:" in m and "writes are skipped" in m for m in full)
    assert not [r for r in caplog.records if "unavailable" in r.getMessage()], "a full Redis is not a down one"
    marks = {k.decode() for k in redis.Redis.from_url(full_redis.url).scan_iter("aie:state:v1:event:*")}
    assert len(marks) == 1, "de-duplication marks have a prefix of their own, apart from the answer cache"
