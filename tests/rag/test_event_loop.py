"""Nothing the answering pipeline does blocks the event loop: not even loading a new index published while a
question is being answered, nor the model clients' first call (asyncio's debug mode reports every callback
that runs longer than 100 ms)."""

from __future__ import annotations

import asyncio
import gc
import logging
import shutil
import time

from ai_employee.wiring import KnowledgeBase, make_pipeline
from rag.config import Settings
from rag.types import Answer
from tests.conftest import HANDBOOK
from tests.fakes.openai_server import FakeOpenAIServer

COPIES = 600  # teams with the handbook's Markdown policies: ~18,000 passages, a load of several 100 ms


def copy_handbook(docs, copies: int) -> None:
    for team in range(copies):
        folder = docs / f"team-{team:03d}"
        folder.mkdir(parents=True, exist_ok=True)
        for source in HANDBOOK.glob("*.md"):
            shutil.copyfile(source, folder / source.name)


def slow_callbacks(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "asyncio" and " took " in r.getMessage()]


def test_a_version_published_mid_question_is_loaded_off_the_loop(settings, tmp_path, caplog):
    docs = tmp_path / "docs"
    publisher = KnowledgeBase(settings, tmp_path / "kb")  # another process, or a reindex
    copy_handbook(docs, 1)
    publisher.refresh([docs])  # the texts are embedded once: every copy has the same passages
    copy_handbook(docs, COPIES)
    first = publisher.refresh(None).version
    began = time.perf_counter()
    publisher.store.load_current()
    assert time.perf_counter() - began > 0.1, "the index must be big enough that loading it blocks for 100 ms"

    with FakeOpenAIServer() as model:
        published: list[str] = []

        def publish_then_score(_query: str, document: str) -> float:  # reranking takes as long as a reindex
            if not published:
                (docs / "team-000" / "news.md").write_text("# News\n\nThe canteen opens at 8 on Mondays.\n")
                published.append(publisher.refresh(None).version)
            return 0.9 if "leave" in document else 0.1

        model.script.rerank = publish_then_score
        model.script.chat_fn = lambda _request: "annual leave days per year"
        serving = KnowledgeBase(Settings(data_dir=settings.data_dir, _env_file=None, rewrite_base_url=model.base_url,
                                         rewrite_model="stand-in", rerank_base_url=model.base_url,
                                         rerank_model="stand-in", rerank_timeout=120), tmp_path / "kb")
        pipeline = make_pipeline(serving)
        assert serving.retriever.snapshot.version == first  # loaded before the question

        async def ask() -> Answer:
            loop = asyncio.get_running_loop()
            loop.slow_callback_duration = 0.1
            async for item in pipeline.answer("How many days of annual leave do I get?"):
                if isinstance(item, Answer):
                    return item
            raise AssertionError("no answer")

        # In the whole suite this process holds what the tests before it left: one full garbage collection
        # over that heap takes ~0.1 s (0.097 s after just 89 answering tests), and run there the test saw
        # loop steps of 0.10-0.12 s (alone: none). Frozen, the collector skips what was there before the
        # question; what the question and the new index make is collected as ever.
        gc.collect()
        gc.freeze()
        try:
            with caplog.at_level(logging.WARNING, logger="asyncio"):
                answer = asyncio.run(ask(), debug=True)
        finally:
            gc.unfreeze()
    assert published and published[0] != first
    assert answer.text and answer.index_version in (first, published[0])
    assert slow_callbacks(caplog) == []
