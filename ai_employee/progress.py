"""Terminal progress for long work (indexing, evaluation), drawn on stderr so stdout stays clean."""

from __future__ import annotations

import os
import time
from contextlib import contextmanager
from collections.abc import Iterator
from typing import TYPE_CHECKING

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn, TimeRemainingColumn

if TYPE_CHECKING:
    from rag.index.builder import IndexProgress



def console(stderr: bool = False) -> Console:
    """A console that wraps at the terminal's width; off a terminal (a pipe, a file) lines stay whole, so ids
    and paths can be read back (unless COLUMNS sets a width)."""
    made = Console(stderr=stderr)
    if not made.is_terminal and "COLUMNS" not in os.environ:
        made.soft_wrap = True
        made.width = 10_000  # tables too: as wide as their content
    return made


stderr = console(stderr=True)


def _progress() -> Progress:
    return Progress(
        TextColumn("{task.description:<10}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        TextColumn("{task.fields[detail]}", style="dim"),
        console=stderr,
        transient=False,
    )


class IndexProgressView:
    """Turns IndexProgress events into a files bar and an embeddings bar.

    Off a terminal (CI logs, redirected output) bars cannot redraw, so a plain status line is
    printed every few seconds instead.
    """

    def __init__(self, progress: Progress, line_every: float = 15.0) -> None:
        self._progress = progress
        self._tasks: dict[str, TaskID] = {}
        self._plain = not progress.console.is_terminal
        self._line_every = line_every
        self._last_line = 0.0
        self._state: dict[str, tuple[int, int]] = {}

    def __call__(self, event: IndexProgress) -> None:
        label = {"fetch": "sources", "parse": "files", "embed": "embeddings", "build": "index", "done": "index"}[event.stage]
        if self._plain:
            self._state[label] = (event.done, event.total)
            now = time.monotonic()
            if now - self._last_line >= self._line_every or event.stage in ("build", "done"):
                self._last_line = now
                parts = " · ".join(f"{name} {done}/{total}" for name, (done, total) in self._state.items())
                self._progress.console.print(f"[{time.strftime('%H:%M:%S')}] {parts}", highlight=False)
            return
        if label not in self._tasks:
            self._tasks[label] = self._progress.add_task(label, total=max(event.total, 1), detail="")
        task = self._tasks[label]
        detail = event.detail if len(event.detail) <= 48 else "…" + event.detail[-47:]
        self._progress.update(task, completed=event.done, total=max(event.total, 1), detail=detail)


@contextmanager
def index_progress(enabled: bool = True) -> Iterator[IndexProgressView | None]:
    if not enabled:
        yield None
        return
    with _progress() as progress:
        yield IndexProgressView(progress)


@contextmanager
def counter(description: str, total: int, enabled: bool = True) -> Iterator[callable]:
    if not enabled:
        yield lambda done: None
        return
    with _progress() as progress:
        task = progress.add_task(description, total=total, detail="")
        yield lambda done: progress.update(task, completed=done)
