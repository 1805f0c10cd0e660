"""The threading rule of rag.pipeline: an answer's blocking stages run in one worker thread of its own, and the
event loop never reads Redis, SQLite or the index while an answer streams.

Patch-free: a profiler (sys.setprofile / threading.setprofile, which only observe) records which thread
enters the real redis client, sqlite3 and the index's code while real answers stream."""

from __future__ import annotations

import asyncio
import sys
import threading
from collections import defaultdict
from pathlib import Path

from pydantic import SecretStr

import rag.index
import redis
from rag.types import Answer
from tests.fakes.openai_server import FakeOpenAIServer

WATCHED = {"redis": str(Path(redis.__file__).parent), "index": str(Path(rag.index.__file__).parent)}


class Touches:
    """Per thread: which of Redis, SQLite and the index its code entered."""

    def __init__(self) -> None:
        self.by_thread: dict[str, set[str]] = defaultdict(set)

    def __call__(self, frame, event: str, arg) -> None:
        if event == "c_call":
            owner = getattr(arg, "__self__", None)
            if owner is not None and type(owner).__module__ == "sqlite3":
                self.by_thread[threading.current_thread().name].add("sqlite")
        elif event == "call":
            filename = frame.f_code.co_filename
            for what, folder in WATCHED.items():
                if filename.startswith(folder):
                    self.by_thread[threading.current_thread().name].add(what)

    def __enter__(self) -> Touches:
        threading.setprofile(self)
        sys.setprofile(self)
        return self

    def __exit__(self, *_exc: object) -> None:
        sys.setprofile(None)
        threading.setprofile(None)


def test_the_loop_never_touches_redis_sqlite_or_the_index_and_each_answer_has_one_worker(handbook, redis_process):
    with FakeOpenAIServer() as models:
        models.script.chat_fn = lambda body: ("Query: minimum password length"
                                              if "password" in body["messages"][-1]["content"] else "Query: Paris")
        models.script.chat_reply = "Passwords must be at least 14 characters long [S1]."
        models.script.rerank = lambda query, document: 0.9 if "password" in query and "password" in document else 0.1
        url = models.base_url
        pipeline = handbook.pipeline(redis_url=SecretStr(redis_process.url), rewrite_base_url=url, rewrite_model="r",
                                     rerank_base_url=url, rerank_model="k", answer_base_url=url, answer_model="a",
                                     gate_min_rerank_score=0.5)
        questions = ["How long must a password be?", "What is the capital of France?"]

        async def ask(question: str) -> tuple[str, Answer]:
            streamed, final = [], None
            async for item in pipeline.answer(question, [("Hi", "Hello")]):
                if isinstance(item, Answer):
                    final = item
                else:
                    streamed.append(item)
            return "".join(streamed), final

        async def both():
            loop_thread = threading.current_thread().name
            return loop_thread, await asyncio.gather(*(ask(q) for q in questions))

        with Touches() as touches:
            loop_thread, answers = asyncio.run(both())
    (text, answered), (_, refused) = answers
    assert "14 characters" in text and answered.citations and not answered.refused
    assert refused.refused and answered.rewritten_query == "minimum password length"
    assert touches.by_thread.get(loop_thread, set()) == set(), "the event loop read Redis, SQLite or the index"
    workers = {name: what for name, what in touches.by_thread.items() if name.startswith("answer")}
    assert len(workers) == len(questions), "each answer's blocking stages run in one thread of its own"
    assert all({"redis", "sqlite", "index"} <= what for what in workers.values())
    others = {name: what for name, what in touches.by_thread.items() if name not in workers and name != loop_thread}
    # The retriever's own pool runs the dense search beside BM25 for the worker (rag.retrieval), nothing else.
    assert all(name.startswith("retrieve") and what == {"index"} for name, what in others.items()), others
