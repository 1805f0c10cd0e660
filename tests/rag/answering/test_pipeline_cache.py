"""Caching in the answering pipeline against a real Redis server (own process per test)."""

from __future__ import annotations

import asyncio
import shutil

import pytest
from pydantic import SecretStr

import rag.answering.rewrite
import rag.answering.candidates
import rag.code_version as code_version_module
from rag.knowledge_base import KnowledgeBase, make_pipeline
from rag.config import Settings
from tests.conftest import build
from tests.fakes.openai_server import FakeOpenAIServer
from tests.rag.answering.test_pipeline import collect, watch_searches

DOCS = {
    "travel.md": "# Travel\n\n## Meals\n\nThe daily meal allowance is 45 EUR for a full travel day.\n",
    "security.md": "# Security\n\n## Passwords\n\nPasswords must be at least 14 characters long.\n",
}


@pytest.fixture
def redis_server(redis_process):
    return redis_process


@pytest.fixture
def setup(tmp_path, redis_server):
    docs = tmp_path / "docs"
    docs.mkdir()
    for name, text in DOCS.items():
        (docs / name).write_text(text, encoding="utf-8")
    with FakeOpenAIServer() as models:
        models.script.chat_fn = lambda body: "daily meal allowance amount"
        settings = Settings(
            data_dir=tmp_path / "data", _env_file=None, redis_url=redis_server.url, gate_threshold=0.0,
            embed_base_url=models.base_url, embed_model="e5-remote", embed_max_retries=0,
            rewrite_base_url=models.base_url, rewrite_model="Qwen/Qwen3-0.6B",
        )
        kb = KnowledgeBase(settings, tmp_path / "data" / "index")
        build(kb, [docs])
        yield kb, docs, models, redis_server


def test_repeated_question_is_served_from_redis(setup):
    kb, _, models, _ = setup
    pipeline = make_pipeline(kb)
    assert pipeline.cache.backend == "redis"
    searches = watch_searches(pipeline)

    async def twice():
        first = (await collect(pipeline, "How much is the meal allowance?"))[1]
        calls = (len(models.requests_to("/embeddings")), len(models.requests_to("/chat/completions")), len(searches))
        second = (await collect(pipeline, "How much is the meal allowance?"))[1]
        after = (len(models.requests_to("/embeddings")), len(models.requests_to("/chat/completions")), len(searches))
        return first, second, calls, after

    first, second, calls, after = asyncio.run(twice())
    assert calls[0] >= 2 and calls[1] == 1 and calls[2] == 2, "first time: embed both queries, rewrite once, retrieve twice"
    assert after == calls, "second time: no rewrite, embedding or retrieval call at all"
    assert second.text == first.text and second.rewritten_query == "daily meal allowance amount"
    stats = pipeline.cache.stats.counts()["namespaces"]
    assert stats["rewrite"]["hits"] == 1 and stats["candidates"]["hits"] == 1


def test_a_new_index_version_misses_the_cache(setup):
    kb, docs, models, _ = setup

    async def ask_once():
        return (await collect(make_pipeline(kb), "How much is the meal allowance?"))[1]

    asyncio.run(ask_once())
    before = len(models.requests_to("/chat/completions"))
    (docs / "travel.md").write_text(DOCS["travel.md"].replace("45 EUR", "50 EUR"), encoding="utf-8")
    build(kb, None)
    answer = asyncio.run(ask_once())
    assert len(models.requests_to("/chat/completions")) == before + 1, "rewrite asked again for the new version"
    assert "50 EUR" in answer.text


def test_another_version_of_the_code_finds_and_rewrites_afresh(setup, tmp_path, monkeypatch):
    """An upgrade, replicas sharing Redis: the new code never serves the candidates or the rewrite that the old
    code cached (they may differ: the way passages are found changed), whoever cached them."""
    kb, _, models, _ = setup

    async def ask(pipeline):
        return (await collect(pipeline, "How much is the meal allowance?"))[1]

    asyncio.run(ask(make_pipeline(kb)))
    upgraded = tmp_path / "upgraded-rag"
    shutil.copytree(code_version_module.PACKAGE, upgraded, ignore=shutil.ignore_patterns("__pycache__"))
    retrieval = upgraded / "index" / "retrieval.py"
    retrieval.write_text(retrieval.read_text(encoding="utf-8") + "\n# a change\n", encoding="utf-8")
    assert code_version_module.digest_of(upgraded) != code_version_module.code_version()
    for module in (rag.answering.candidates, rag.answering.rewrite):
        monkeypatch.setattr(module, "code_version", lambda: code_version_module.digest_of(upgraded))
    rewrites = len(models.requests_to("/chat/completions"))
    pipeline = make_pipeline(kb)
    searches = watch_searches(pipeline)

    answer = asyncio.run(ask(pipeline))

    assert len(models.requests_to("/chat/completions")) == rewrites + 1, "rewritten again by the new code"
    assert searches, "searched again by the new code"
    assert "45 EUR" in answer.text


def test_answers_continue_when_redis_stops_and_resume_caching_when_it_returns(setup):
    kb, _, models, redis_server = setup
    pipeline = make_pipeline(kb)
    pipeline.cache._retry_after = 0.2

    async def run():
        await collect(pipeline, "How long must passwords be?")
        redis_server.stop()
        during = (await collect(pipeline, "How long must passwords be?"))[1]
        redis_server.start()
        await asyncio.sleep(0.3)
        await collect(pipeline, "What is the meal allowance?")
        calls = len(models.requests_to("/chat/completions"))
        again = (await collect(pipeline, "What is the meal allowance?"))[1]
        return during, calls, again

    during, calls, again = asyncio.run(run())
    assert "14 characters" in during.text and not during.refused
    assert pipeline.cache.stats.errors >= 1
    assert len(models.requests_to("/chat/completions")) == calls, "cached again once Redis is back"
    assert "45 EUR" in again.text


def test_candidates_cached_before_an_access_list_was_added_are_filtered_again(kb, tmp_path, redis_process):
    """A question that read the index version just before a reindex may find its candidates in the cache
    after it; they are decoded against the new index, whose access lists they must still pass."""
    from rag.types import Scope

    docs = tmp_path / "docs"
    (docs / "hr").mkdir(parents=True)
    (docs / "hr" / "bonus.md").write_text("# Bonus\n\nThe yearly bonus is paid out in March.\n", encoding="utf-8")
    (docs / "welcome.md").write_text("# Welcome\n\nThe office opens at eight.\n", encoding="utf-8")
    kb.settings = kb.settings.model_copy(update={"redis_url": SecretStr(redis_process.url)})
    build(kb, [docs])
    finder = make_pipeline(kb).finder
    channel = Scope(None, frozenset())
    before = kb.store.current_version()
    found = asyncio.run(finder.find("When is the yearly bonus paid?", None, before, channel))
    assert found.hits[0].chunk.file == "hr/bonus.md" and not found.cached
    (docs / "hr" / "bonus.md.access").write_text("U0BOSS\n", encoding="utf-8")
    build(kb, [docs])
    assert kb.store.current_version() != before and kb.retriever.snapshot.version != before
    again = asyncio.run(finder.find("When is the yearly bonus paid?", None, before, channel))
    assert again.cached and [h.chunk.file for h in again.hits] == ["welcome.md"]
