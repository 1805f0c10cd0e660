"""What every chat surface shares, assembled by the composition root: one answerer (one concurrency limit),
one feedback store, one reindexer (one reindex at a time across surfaces), one store of delivery marks and
conversation state, one scope resolver (what each place and person may be answered from)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from bot.core.answering import Answerer
from bot.core.conversation_state import ConversationState
from bot.core.deliveries import DeliveryMarks
from bot.core.memory import ConversationMemory
from bot.core.reindex import Reindexer
from bot.core.scopes.documents import Documents, readable_manifest, visible_files
from bot.core.scopes.resolver import ScopeResolver
from bot.core.sources import SourceDesk, Teller
from rag.feedback import FeedbackAdjuster, FeedbackStore
from rag.index.snapshot import Manifest  # what the live index holds, as chat surfaces list and show it

if TYPE_CHECKING:
    from bot.core.metrics import Metrics
    from rag.types import Scope


@dataclass
class IndexInfo:
    """The live index as chat shows it (every call blocks: run them off the event loop)."""

    manifest: Callable[[], Manifest | None]  # None: no index yet
    live: Callable[[], Callable[[str], bool] | None]  # chunk id -> still in the live index (None: no index)
    documents: Callable[[], Documents | None] = lambda: None  # file -> one of its passages (None: no index)


@dataclass(kw_only=True)
class CoreServices:
    """Every collaborator is given by the composition root (ai_employee/wiring.py): none is built here, so a
    missing one is an error at start rather than a silent default (e.g. a resolver serving every collection
    everywhere)."""

    answerer: Answerer
    feedback: FeedbackStore
    reindexer: Reindexer
    deliveries: DeliveryMarks  # events, activities and questions handled already (Redis when configured)
    conversation_state: ConversationState  # the bot's threads, turns, each message's answer (likewise)
    adjuster: FeedbackAdjuster  # what the votes do to retrieval: the one the pipeline demotes with
    scopes: ScopeResolver  # what each place and person may be answered from
    memory: ConversationMemory  # each conversation's last turns and which message holds which answer
    index: IndexInfo | None  # None: no index to show (e.g. a test of one surface's wiring)
    metrics: Metrics | None = None  # what /metrics shows (the answerer, reindexer and feedback store count into it)
    sources: SourceDesk | None = None  # the declared sources (AIE_SOURCES_FILE); None without the file
    tellers: dict[str, Teller] = field(default_factory=dict)  # platform -> how to reach one of its admins privately

    def documents(self) -> Documents | None:
        """The live index's documents, one passage each (blocking; None: no index)."""
        return self.index.documents() if self.index is not None else None

    def manifest(self) -> Manifest | None:
        """The live index's whole manifest, for an admin's status (blocking; None: no index)."""
        return self.index.manifest() if self.index is not None else None

    def manifest_for(self, scope: Scope) -> Manifest | None:
        """The live index's manifest listing only the documents `scope` may read (blocking; None: no index)."""
        manifest = self.manifest()
        return None if manifest is None else readable_manifest(manifest, self.documents(), scope)

    async def names_visible_to(self, scope: Scope) -> Callable[[str], bool]:
        """Which file names may be shown to `scope`, as the live index says now (a reindex report)."""
        def judge() -> Callable[[str], bool]:
            manifest = self.manifest()
            return visible_files(self.documents(), scope, manifest.collection if manifest is not None else None)

        return await asyncio.to_thread(judge)
