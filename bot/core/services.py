"""What every chat surface shares, assembled by the composition root: one answerer (one concurrency limit),
one feedback store, one reindexer (one reindex at a time across surfaces), one de-duplication store, one
scope resolver (what each place and person may be answered from)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from bot.core.answering import Answerer
from bot.core.dedup import Dedup
from bot.core.memory import ConversationMemory
from bot.core.reindex import Reindexer
from bot.core.scopes.config import ScopesFile
from bot.core.scopes.documents import Documents, readable_manifest, visible_files
from bot.core.scopes.resolver import ScopeResolver
from bot.core.sources import SourceDesk, Teller
from rag.feedback import FeedbackAdjuster, FeedbackStore

if TYPE_CHECKING:
    from bot.core.metrics import Metrics
    from rag.index.snapshot import Manifest
    from rag.types import Scope


@dataclass
class IndexInfo:
    """The live index as chat shows it (every call blocks: run them off the event loop)."""

    manifest: Callable[[], Manifest | None]  # None: no index yet
    live: Callable[[], Callable[[str], bool] | None]  # chunk id -> still in the live index (None: no index)
    documents: Callable[[], Documents | None] = lambda: None  # file -> one of its passages (None: no index)


@dataclass(kw_only=True)
class CoreServices:
    answerer: Answerer
    feedback: FeedbackStore
    reindexer: Reindexer
    dedup: Dedup  # deliveries, questions and conversations seen (Redis when configured)
    adjuster: FeedbackAdjuster | None = None  # what the votes do to retrieval (for votes and admin views)
    index: IndexInfo | None = None
    memory: ConversationMemory | None = None
    metrics: Metrics | None = None  # what /metrics shows (the answerer, reindexer and feedback store count into it)
    scopes: ScopeResolver | None = None  # the composition root's; by default every collection everywhere
    sources: SourceDesk | None = None  # the declared sources (AIE_SOURCES_FILE); None without the file
    tellers: dict[str, Teller] = field(default_factory=dict)  # platform -> how to reach one of its admins privately

    def __post_init__(self) -> None:
        if self.adjuster is None and self.feedback is not None:  # the composition root passes the pipeline's
            self.adjuster = FeedbackAdjuster(self.feedback)
        if self.scopes is None:
            self.scopes = ScopeResolver(ScopesFile())
        if self.memory is None and self.dedup is not None:
            self.memory = ConversationMemory(self.dedup)

    def documents(self) -> Documents | None:
        """The live index's documents, one passage each (blocking; None: no index)."""
        return self.index.documents() if self.index is not None else None

    def manifest_for(self, scope: Scope) -> Manifest | None:
        """The live index's manifest listing only the documents `scope` may read (blocking; None: no index)."""
        manifest = self.index.manifest() if self.index is not None else None
        return None if manifest is None else readable_manifest(manifest, self.documents(), scope)

    async def names_visible_to(self, scope: Scope) -> Callable[[str], bool]:
        """Which file names may be shown to `scope`, as the live index says now (a reindex report)."""
        def judge() -> Callable[[str], bool]:
            manifest = self.index.manifest() if self.index is not None else None
            return visible_files(self.documents(), scope, manifest.collection if manifest is not None else None)

        return await asyncio.to_thread(judge)

    def shared(self) -> dict:
        """The fields, to build a surface's services around the same objects."""
        return {name: getattr(self, name) for name in self.__dataclass_fields__}
