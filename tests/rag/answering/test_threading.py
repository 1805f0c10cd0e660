"""The threading rule of rag.answering.pipeline: an answer's blocking stages run in one worker thread of its own, and the
event loop never reads Redis, SQLite or the index while an answer streams.

Patch-free: a profiler (sys.setprofile / threading.setprofile, which only observe) records which thread
enters the real redis client, sqlite3 and the index's code while real answers stream. It runs in a fresh
interpreter, so that every thread an answer uses starts under the profiler (answer threads are kept for
later answers, and a profiler set now does not reach a thread started before)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
from collections import defaultdict
from pathlib import Path

from tests.conftest import PROJECT

QUESTIONS = ["How long must a password be?", "What is the capital of France?"]


class Touches:
    """Per thread: which of Redis, SQLite and the index its code entered."""

    def __init__(self) -> None:
        import rag.index
        import redis

        self.watched = {"redis": str(Path(redis.__file__).parent), "index": str(Path(rag.index.__file__).parent)}
        self.by_thread: dict[str, set[str]] = defaultdict(set)

    def __call__(self, frame, event: str, arg) -> None:
        if event == "c_call":
            owner = getattr(arg, "__self__", None)
            if owner is not None and type(owner).__module__ == "sqlite3":
                self.by_thread[threading.current_thread().name].add("sqlite")
        elif event == "call":
            filename = frame.f_code.co_filename
            for what, folder in self.watched.items():
                if filename.startswith(folder):
                    self.by_thread[threading.current_thread().name].add(what)

    def __enter__(self) -> Touches:
        threading.setprofile(self)
        sys.setprofile(self)
        return self

    def __exit__(self, *_exc: object) -> None:
        sys.setprofile(None)
        threading.setprofile(None)


def observe(data_dir: str, index_dir: str, redis_url: str) -> None:
    """Answer `QUESTIONS` at once with every model and Redis configured; print what each thread touched."""
    from rag.knowledge_base import KnowledgeBase, make_pipeline
    from rag.config import Settings
    from rag.types import Answer
    from tests.fakes.openai_server import FakeOpenAIServer

    with FakeOpenAIServer() as models:
        models.script.chat_fn = lambda body: ("Query: minimum password length"
                                              if "password" in body["messages"][-1]["content"] else "Query: Paris")
        models.script.chat_reply = "Passwords must be at least 14 characters long [S1]."
        models.script.rerank = lambda query, document: 0.9 if "password" in query and "password" in document else 0.1
        url = models.base_url
        settings = Settings(data_dir=Path(data_dir), _env_file=None, redis_url=redis_url, rewrite_base_url=url,
                            rewrite_model="r", rerank_base_url=url, rerank_model="k", answer_base_url=url,
                            answer_model="a", gate_min_rerank_score=0.5)
        pipeline = make_pipeline(KnowledgeBase(settings, Path(index_dir)))

        async def ask(question: str) -> dict:
            streamed, final = [], None
            async for item in pipeline.answer(question, [("Hi", "Hello")]):
                if isinstance(item, Answer):
                    final = item
                else:
                    streamed.append(item)
            return {"streamed": "".join(streamed), "refused": final.refused, "cited": len(final.citations),
                    "rewritten": final.rewritten_query}

        async def both():
            return threading.current_thread().name, await asyncio.gather(*(ask(q) for q in QUESTIONS))

        with Touches() as touches:
            loop_thread, answers = asyncio.run(both())
    print(json.dumps({"loop": loop_thread, "answers": answers,
                      "touches": {name: sorted(what) for name, what in touches.by_thread.items()}}))


def test_the_loop_never_touches_redis_sqlite_or_the_index_and_each_answer_has_one_worker(handbook, redis_process):
    env = {k: v for k, v in os.environ.items() if not k.startswith("AIE_")} | {"PYTHONPATH": str(PROJECT)}
    run = subprocess.run(
        [sys.executable, "-c", "import sys; from tests.rag.answering.test_threading import observe; observe(*sys.argv[1:])",
         str(handbook.data_dir), str(handbook.index_dir), redis_process.url],
        cwd=PROJECT, env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-2000:]
    seen = json.loads(run.stdout.strip().splitlines()[-1])
    answered, refused = seen["answers"]
    assert "14 characters" in answered["streamed"] and answered["cited"] and not answered["refused"]
    assert refused["refused"] and answered["rewritten"] == "minimum password length"
    touches, loop_thread = seen["touches"], seen["loop"]
    assert touches.get(loop_thread, []) == [], "the event loop read Redis, SQLite or the index"
    workers = {name: set(what) for name, what in touches.items() if name.startswith("answer")}
    assert len(workers) == len(QUESTIONS), "each answer's blocking stages run in one thread of its own"
    assert all({"redis", "sqlite", "index"} <= what for what in workers.values())
    others = {name: what for name, what in touches.items() if name not in workers and name != loop_thread}
    # The retriever's own pool runs the dense search beside BM25 for the worker (rag.index.retrieval), nothing else.
    assert all(name.startswith("retrieve") and what == ["index"] for name, what in others.items()), others
