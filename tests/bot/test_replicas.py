"""Two real `ai-employee serve` processes on one data directory and one real Redis, as an operator runs
replicas behind one URL: a delivery is answered once whichever replica gets it, a reindex on one is served
by the other within seconds, and the reindex lock is shared.

The index is either the FAISS snapshots on the shared data directory or one Milvus shared over the network.
Milvus Lite opens its data file for one process only, so the Milvus replicas share it through
`milvus-lite server` (the same gRPC interface as a Milvus server)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from contextlib import ExitStack

import pytest

from rag.knowledge_base import KnowledgeBase
from rag.config import Settings
from rag.index.coordination import RedisIndexLock
from tests.bot.harness import wait_for
from tests.bot.replicas import Replica, replica_env
from tests.bot.slack.test_bot import answer_text, final_answers, mention
from tests.conftest import HANDBOOK, build
from tests.processes import MilvusLiteServer

PARKING = """# Visitor parking

Visitors park in bay Q7, behind the east gate. Reception hands out the parking permit, which must lie
visibly behind the windscreen. Bay Q7 is free of charge for up to four hours.
"""


def reports(slack, icon: str) -> list[str]:
    return [c.args["text"] for c in slack.calls_to("chat.update") + slack.calls_to("chat.postMessage")
            if icon in c.args.get("text", "")]


def knowledge_base(tmp_path, **settings) -> tuple:
    docs = tmp_path / "docs"
    docs.mkdir()
    for name in ("travel-expenses.md", "onboarding.md", "差旅报销制度.md"):
        shutil.copy(HANDBOOK / name, docs / name)
    kb = KnowledgeBase.default(Settings(data_dir=tmp_path / "data", _env_file=None, **settings))
    build(kb, [docs])
    return docs, kb


@pytest.fixture
def replicas(request, redis_process, slack, tmp_path):
    """Two replicas on FAISS (default) or, with `indirect` parameter "milvus", on one shared Milvus."""
    with ExitStack() as stack:
        index: dict[str, str] = {}
        if getattr(request, "param", "faiss") == "milvus":
            milvus = stack.enter_context(MilvusLiteServer(tmp_path / "milvus.db"))
            index = {"vector_store": "milvus", "milvus_uri": milvus.uri}
        docs, kb = knowledge_base(tmp_path, **index)
        env = replica_env(kb.settings.data_dir, slack.base_url, redis_process.url, gate_threshold="0.0",
                          docs_paths=str(docs), **index)
        started: list[Replica] = []
        try:
            started.append(Replica("a", env, tmp_path))
            started.append(Replica("b", env, tmp_path))
            for replica in started:
                wait_for(lambda r=replica: r.get("/ready").status_code == 200, 120)
            yield started[0], started[1], docs, kb
        finally:
            for replica in started:
                replica.stop()


def test_a_delivery_sent_to_both_replicas_is_answered_once(replicas, slack):
    a, b, _, _ = replicas
    event = mention(slack, "How long must a password be?")
    assert a.event(event, event_id="EvSHARED0001").status_code == 200
    assert b.event(event, event_id="EvSHARED0001").status_code == 200  # Slack's retry, routed elsewhere
    wait_for(lambda: final_answers(slack))
    time.sleep(2)
    assert len(slack.calls_to("chat.startStream")) == 1 and len(final_answers(slack)) == 1


@pytest.mark.parametrize("replicas", ["faiss", "milvus"], indirect=True)
def test_a_reindex_on_one_replica_is_served_by_the_other_within_seconds(replicas, slack):
    a, b, docs, kb = replicas
    before = b.get("/health").json()["serving"]
    assert before == a.get("/health").json()["serving"] == kb.store.current_version()
    (docs / "visitor-parking.md").write_text(PARKING, encoding="utf-8")

    assert "Reindexing" in a.command("/reindex", "U0ADMIN01").text
    done = wait_for(lambda: reports(slack, ":white_check_mark:"), 120)[0]
    new = kb.store.current_version()
    assert new != before and f"`{new}`" in done
    announced = time.perf_counter()
    # Nobody asks B anything: the announcement alone makes it load the new version.
    wait_for(lambda: b.get("/health").json()["serving"] == new, 10)
    assert time.perf_counter() - announced < 10
    assert f'aie_index_info{{version="{new}"}} 1.0' in b.get("/metrics").text

    slack.clear_calls()
    b.event(mention(slack, "Where do visitors park?"))
    final = wait_for(lambda: final_answers(slack), 60)[0]
    assert "Q7" in answer_text(final.args["blocks"])


@pytest.mark.parametrize("replicas", ["faiss", "milvus"], indirect=True)
def test_a_reindex_running_elsewhere_is_named_to_the_admin(replicas, redis_process, slack):
    _, b, docs, kb = replicas
    # Something to publish: the lock is taken only for that (a reindex finding nothing new says so at once)
    (docs / "visitor-parking.md").write_text(PARKING, encoding="utf-8")
    with RedisIndexLock(redis_process.url, kb.index_id, "U0OTHER01 (teams) on bot-c"):
        assert "Reindexing" in b.command("/reindex", "U0ADMIN01").text
        failed = wait_for(lambda: reports(slack, ":x:"), 60)[0]
    assert "previous index is still serving" in failed
    assert "another reindex is running (started by U0OTHER01 (teams) on bot-c at " in failed
    assert "Traceback" not in b.log.read_text(), "an expected condition, logged as one line"


def test_without_redis_a_replica_switches_on_its_next_question(slack, tmp_path):
    """No announcement without Redis: the shared data directory's CURRENT pointer is read on each question."""
    docs, kb = knowledge_base(tmp_path)
    env = replica_env(kb.settings.data_dir, slack.base_url, None, gate_threshold="0.0")
    replica = Replica("solo", env, tmp_path)
    try:
        before = wait_for(lambda: replica.get("/health").json()["serving"], 60)
        (docs / "visitor-parking.md").write_text(PARKING, encoding="utf-8")
        subprocess.run([sys.executable, "-m", "ai_employee.cli", "index"], env=env, cwd=tmp_path, check=True,
                       capture_output=True, timeout=300)
        new = kb.store.current_version()
        time.sleep(2)
        assert new != before and replica.get("/health").json()["serving"] == before
        replica.event(mention(slack, "Where do visitors park?"))
        final = wait_for(lambda: final_answers(slack), 60)[0]
        assert "Q7" in answer_text(final.args["blocks"]) and replica.get("/health").json()["serving"] == new
    finally:
        replica.stop()
