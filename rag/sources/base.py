"""What every connector offers and returns.

A connector keeps one source's documents in a folder (`Fetched.root`): a git checkout, a crawled site's
pages, a Confluence space's pages and attachments. The indexer reads that folder like any other, with
the metadata the connector knows better than the files (`DocumentMeta`: the page's URL, version, date,
access list, its place in a page tree). A listing that fails, or stops short, raises `SourceError` or
returns `complete=False`: then nothing the mirror holds is deleted, so the last good documents keep serving.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from rag.index.metadata import DocumentMeta

Progress = Callable[[int, int, str], None]  # done, total (0: unknown), what is being fetched


@dataclass
class Fetched:
    """A connector's fetch: the folder to index and what became of the source's documents."""

    root: Path  # the folder holding the documents (names under it are the documents' names)
    documents: dict[str, DocumentMeta] = field(default_factory=dict)  # name under root → metadata
    complete: bool = True  # False: the listing stopped short; what was not seen was kept, not removed
    changed: list[str] = field(default_factory=list)  # names fetched anew (added or changed)
    removed: list[str] = field(default_factory=list)  # names the source no longer has (deleted from the mirror)
    kept: dict[str, str] = field(default_factory=dict)  # name → why its last good copy was kept (e.g. a 500)
    calls: int = 0  # requests made to the source (API calls, HTTP requests, git fetches)
    state: dict[str, Any] = field(default_factory=dict)  # what the next fetch needs to be incremental
    version: str = ""  # the source's own version when it has one (a git commit)
    # What else whoever asked for the sync should know, naming no document: who its documents' readers leave
    # out and why ("the wiki group board-only is mapped to no chat group …"), a bound the fetch hit
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class CheckReport:
    """`sources check`: the source reached and authenticated, its documents counted; nothing changed."""

    ok: bool
    documents: int | None = None
    detail: str = ""  # one line: what was reached, or what failed and what to fix
    # A wiki group the sources file maps to no chat group -> the titles of the pages it keeps from its members
    unmapped_groups: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # A wiki space whose view permissions could not be read (its pages reach no one) -> why
    unreadable_spaces: dict[str, str] = field(default_factory=dict)
    # A wiki space -> the users it lets view it whom the bot cannot match to chat users (no email shown)
    unmatched_users: dict[str, tuple[str, ...]] = field(default_factory=dict)


class SourceError(RuntimeError):
    """A source that could not be listed or reached. The message is safe to show an admin (never a token)
    and names what to fix: "Confluence answered 401 for eng-wiki: check CONFLUENCE_TOKEN"."""

    def __init__(self, message: str, *, variable: str | None = None, retry_after: float | None = None,
                 transient: bool = False) -> None:
        super().__init__(message)
        self.variable = variable  # the environment variable to fix, when one is at fault
        self.retry_after = retry_after  # seconds the source asked us to wait (429 Retry-After)
        self.transient = transient  # worth retrying soon (a timeout, a 5xx), unlike a refused token


class Connector(Protocol):
    """One source. `fetch` brings `workdir` (the source's own folder, kept between runs) up to date and is
    given the `state` its previous fetch returned ({} the first time)."""

    name: str

    def fetch(self, workdir: Path, state: dict[str, Any], progress: Progress) -> Fetched: ...

    def check(self) -> CheckReport: ...
