"""The reindex lock and the index version announcement, against a real redis-server."""

from __future__ import annotations

import threading
import time

import pytest

from bot.core.reindex import failure_reason
from rag.index.coordination import RedisIndexLock, VersionChannel
from rag.index.snapshot import IndexBusyError


def test_one_holder_at_a_time_and_the_next_is_told_who_holds_it(redis_process):
    first = RedisIndexLock(redis_process.url, "kb1", "U0ADMIN01 (slack) on bot-a")
    with first:
        with pytest.raises(IndexBusyError) as busy:
            with RedisIndexLock(redis_process.url, "kb1", "U0OTHER (teams) on bot-b"):
                pass
        with RedisIndexLock(redis_process.url, "another-kb", "me"):  # other knowledge bases are not blocked
            pass
    reason = failure_reason(busy.value)
    assert reason.startswith("another reindex is running (started by U0ADMIN01 (slack) on bot-a at ")
    assert reason.endswith(" UTC); try again when it has finished")
    with RedisIndexLock(redis_process.url, "kb1", "U0OTHER (teams) on bot-b"):  # released on exit
        pass


def test_a_holder_renews_the_lock_while_it_works(redis_process):
    with RedisIndexLock(redis_process.url, "kb2", "slow reindex", ttl=0.6) as held:
        time.sleep(1.5)  # well past the ttl
        with pytest.raises(IndexBusyError):
            RedisIndexLock(redis_process.url, "kb2", "impatient").__enter__()
        assert not held.lost


def test_a_crashed_holder_blocks_the_next_reindex_for_the_ttl_at_most(redis_process):
    crashed = RedisIndexLock(redis_process.url, "kb3", "a replica that died", ttl=1.0)
    crashed.__enter__()
    crashed._stop.set()  # the process is gone: nobody renews, nobody releases
    with pytest.raises(IndexBusyError):
        RedisIndexLock(redis_process.url, "kb3", "next").__enter__()
    time.sleep(1.3)
    with RedisIndexLock(redis_process.url, "kb3", "next"):
        pass


def test_redis_down_means_no_reindex_rather_than_two(redis_process):
    url = redis_process.url
    redis_process.stop()
    with pytest.raises(IndexBusyError, match="Redis at .* is not answering"):
        with RedisIndexLock(url, "kb4", "me"):
            pass


def test_replicas_hear_a_new_version_within_a_second_and_late_ones_read_it(redis_process):
    heard: list[str] = []
    got = threading.Event()
    stop = threading.Event()
    listener = VersionChannel(redis_process.url, "kb5")
    listener.watch(lambda version: (heard.append(version), got.set()), stop)
    time.sleep(0.3)  # subscribed
    began = time.perf_counter()
    assert VersionChannel(redis_process.url, "kb5").announce("20260101-000000-abc")
    assert got.wait(2), "the announcement did not arrive"
    assert time.perf_counter() - began < 1.0 and heard == ["20260101-000000-abc"]
    assert VersionChannel(redis_process.url, "kb5").announced() == "20260101-000000-abc"
    assert VersionChannel(redis_process.url, "other").announced() is None
    stop.set()


def _docs(folder, text: str):
    folder.mkdir(exist_ok=True)
    (folder / "leave.md").write_text(f"# Leave\n\n{text}\n", encoding="utf-8")
    (folder / "travel.md").write_text("# Travel\n\nTrain tickets are refunded in second class.\n", encoding="utf-8")
    return folder


@pytest.mark.parametrize("how", ["expired", "taken"])
def test_a_build_that_lost_the_lock_publishes_nothing_and_says_why(redis_process, shared_data_dir, tmp_path, how):
    import asyncio

    import redis

    from rag.knowledge_base import KnowledgeBase
    from bot.core.reindex import Reindexer, TextStyle, run_reindex
    from rag.config import Settings
    from rag.index.snapshot import IndexLockLost

    kb = KnowledgeBase(Settings(data_dir=shared_data_dir, _env_file=None, redis_url=redis_process.url), tmp_path / "kb")
    docs = _docs(tmp_path / "docs", "Everyone has 25 days of annual leave.")
    first = kb.refresh([docs]).version
    snapshots = sorted(p.name for p in (tmp_path / "kb" / "snapshots").iterdir())
    _docs(docs, "Everyone has 30 days of annual leave from 2027 on.")
    client = redis.Redis.from_url(redis_process.url)
    key = f"aie:v1:reindex-lock:{kb.index_id}"

    def lose_the_lock(event) -> None:  # while the new version is written (the lock is held only to publish)
        if event.stage == "build" and client.exists(key):
            client.delete(key) if how == "expired" else client.set(key, '{"holder": "bot-2", "since": 0}')

    with pytest.raises(IndexLockLost, match="nothing was published, the previous index is still serving"):
        kb.refresh(None, progress=lose_the_lock)
    assert kb.store.current_version() == first
    assert sorted(p.name for p in (tmp_path / "kb" / "snapshots").iterdir()) == snapshots  # nothing added or deleted
    assert kb.versions.announced() == first
    if how == "taken":
        assert client.get(key) == b'{"holder": "bot-2", "since": 0}'  # the other holder's lock is left alone
        client.delete(key)  # …until it finishes

    class Message:
        texts: list[str] = []

        async def show(self, text: str) -> None:
            self.texts.append(text)

    message = Message()
    reindexer = Reindexer(lambda progress: kb.refresh(None, progress=lambda e: (lose_the_lock(e), progress(e))),
                          lambda: None, update_every=0.05)
    outcome = asyncio.run(run_reindex(reindexer, message, TextStyle("…", "✓", "✗"), by="U0ADMIN01", platform="slack"))
    assert not outcome.ok and message.texts[-1] == outcome.text
    assert outcome.text == ("✗ Reindex failed — the previous index is still serving. Reason: the reindex lock was lost "
                            "before the new index was published (Redis was unreachable too long, or another reindex "
                            "took over); nothing was published.")
    assert "\n" not in outcome.text and kb.store.current_version() == first
