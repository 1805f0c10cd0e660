"""Background embedding worker: keeps the embedder busy while files are still being parsed.

Texts are queued as soon as a file is chunked; the worker embeds full batches, persists each batch
to the work cache right away (so a killed run resumes), and measures how busy the embedder was.
It runs at the lowest CPU priority: beside the bot (`/reindex`), questions go first.
"""

from __future__ import annotations

import logging
import os
import queue
import threading
import time
from collections.abc import Callable

from rag.embedding.base import Embedder
from rag.index.work_cache import WorkCache, text_key

_DONE = object()
_log = logging.getLogger(__name__)
LOWEST_PRIORITY = 19  # nice value


def lower_priority() -> None:
    """Run the calling thread — and the threads it starts, e.g. the embedded model's OpenMP workers, which
    inherit it — at the lowest CPU priority (Linux: a nice value per thread), so that the CPU goes to any
    other work of the process first. Where that is not possible, nothing changes."""
    try:
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), LOWEST_PRIORITY)
    except (AttributeError, OSError) as exc:
        _log.debug("indexing runs at normal priority: %s", exc)


class EmbedWorker:
    def __init__(
        self,
        embedder: Embedder,
        cache: WorkCache,
        on_batch: Callable[[int], None] | None = None,
    ) -> None:
        self._embedder = embedder
        self._cache = cache
        self._on_batch = on_batch
        self._queue: queue.Queue[object] = queue.Queue()
        self._thread = threading.Thread(target=self._run, name="embedder", daemon=True)
        self._error: BaseException | None = None
        self._started_at: float | None = None
        self._finished_at: float | None = None
        self.busy_seconds = 0.0
        self.embedded = 0
        self.queued = 0
        self._submitted: set[str] = set()

    def start(self) -> EmbedWorker:
        self._thread.start()
        return self

    def submit(self, texts: list[str]) -> int:
        """Queue `texts` to embed; how many of them were not queued already."""
        if self._error is not None:
            raise self._error
        fresh = [t for t in dict.fromkeys(texts) if t not in self._submitted]  # files sharing a passage: once
        self._submitted.update(fresh)
        for text in fresh:
            self._queue.put(text)
        self.queued += len(fresh)
        return len(fresh)

    def finish(self) -> None:
        """Wait until every queued text is embedded and stored; re-raise the worker's error."""
        self._queue.put(_DONE)
        self._thread.join()
        if self._error is not None:
            raise self._error

    def abort(self) -> None:
        self._error = self._error or RuntimeError("indexing aborted")
        self._queue.put(_DONE)
        self._thread.join()

    @property
    def wall_seconds(self) -> float:
        if self._started_at is None:
            return 0.0
        return (self._finished_at or time.perf_counter()) - self._started_at

    @property
    def busy_fraction(self) -> float:
        wall = self.wall_seconds
        return self.busy_seconds / wall if wall > 0 else 0.0

    def _run(self) -> None:
        lower_priority()  # a thread of its own, started for this run and ended with it
        batch: list[str] = []
        done = False
        size = self._embedder.batch_size
        try:
            while not done:
                item = self._queue.get()
                if item is _DONE:
                    done = True
                else:
                    batch.append(item)  # type: ignore[arg-type]
                    # Fill the batch from what is already waiting without blocking.
                    while len(batch) < size:
                        try:
                            item = self._queue.get_nowait()
                        except queue.Empty:
                            break
                        if item is _DONE:
                            done = True
                            break
                        batch.append(item)  # type: ignore[arg-type]
                if batch and (len(batch) >= size or done or self._queue.empty()):
                    if self._error is not None:
                        return
                    self._embed(batch)
                    batch = []
        except BaseException as exc:  # noqa: BLE001 - handed to the producer thread
            self._error = exc
        finally:
            self._finished_at = time.perf_counter()

    def _embed(self, texts: list[str]) -> None:
        if self._started_at is None:
            self._started_at = time.perf_counter()
        began = time.perf_counter()
        vectors = self._embedder.embed_passages(texts)
        self.busy_seconds += time.perf_counter() - began
        self._cache.put_vectors(self._embedder.model_id, [text_key(t) for t in texts], vectors)
        self.embedded += len(texts)
        if self._on_batch is not None:
            self._on_batch(len(texts))
