from __future__ import annotations

import asyncio
import contextvars
import threading

from rag.answering.worker import Worker

asker: contextvars.ContextVar[str] = contextvars.ContextVar("asker", default="")


def test_one_answers_stages_run_in_one_thread_off_the_loop_with_the_callers_context():
    def where() -> tuple[str, str]:
        return threading.current_thread().name, asker.get()

    async def run():
        asker.set("U1")
        with Worker() as first, Worker() as second:
            return (threading.current_thread().name, [await first.run(where) for _ in range(3)],
                    await second.run(where))

    loop_thread, in_first, in_second = asyncio.run(run())
    assert len(set(in_first)) == 1 and in_first[0][1] == "U1", "one thread, the log context kept"
    assert in_first[0][0].startswith("answer") and in_first[0][0] != loop_thread
    assert in_second[0] != in_first[0][0], "another answer has a thread of its own"
