"""The sources table: each declared source with how its syncs went, as every surface shows it (`sources
list`, the Slack Home tab, Teams' `sources` command). Written once here; each surface only renders it."""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import asdict, dataclass

from rag.sources.config import ConfluenceSource, FolderSource, GitSource, WebSource
from rag.sources.state import StateStore

Spec = FolderSource | GitSource | WebSource | ConfluenceSource


def when(epoch: float | None) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(epoch)) if epoch else ""


@dataclass(frozen=True)
class SourceRow:
    """One source's line of the table (times as UTC text, "" for never; epoch seconds beside them)."""

    name: str
    type: str
    collection: str
    documents: int
    every_seconds: float
    watch: bool
    last_sync: str
    last_attempt: str
    last_error: str  # safe to show an admin
    error_variable: str | None
    failures: int
    next_run: str  # "on demand", "now" or a time
    last_success_at: float | None = None
    next_run_at: float | None = None

    @property
    def upcoming(self) -> str:
        """What the table's "next run" column says."""
        return "watching" if self.watch else self.next_run

    def to_dict(self) -> dict:
        data = asdict(self)
        del data["last_success_at"], data["next_run_at"]
        return data


def source_rows(specs: Iterable[Spec], states: StateStore, now: float | None = None) -> list[SourceRow]:
    """Each source in `specs` as its state in `states` says (reads each state file: blocking)."""
    now = time.time() if now is None else now
    rows = []
    for spec in specs:
        status = states.load(spec.name).status
        at = status.next_run(spec.every)
        rows.append(SourceRow(
            spec.name, spec.type, spec.collection, status.documents, spec.every, bool(getattr(spec, "watch", False)),
            when(status.last_success), when(status.last_attempt), status.last_error, status.error_variable,
            status.failures, "on demand" if at is None else ("now" if at <= now else when(at)),
            status.last_success, at))
    return rows
