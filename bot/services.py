"""What the Slack listeners need, assembled by the composition root."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from bot.admins import AdminCheck
from bot.answering import Answerer
from bot.config import SlackSettings
from bot.dedup import Dedup
from bot.reindex import Reindexer
from rag.feedback import FeedbackAdjuster, FeedbackStore

if TYPE_CHECKING:
    from rag.index.snapshot import Manifest


@dataclass
class IndexInfo:
    """The live index as the Home tab shows it (both calls block: run them off the event loop)."""

    manifest: Callable[[], Manifest | None]  # None: no index yet
    live: Callable[[], Callable[[str], bool] | None]  # chunk id -> still in the live index (None: no index)


@dataclass
class BotServices:
    answerer: Answerer
    feedback: FeedbackStore
    reindexer: Reindexer
    dedup: Dedup  # events, questions and bot threads seen (Redis when configured)
    settings: SlackSettings
    adjuster: FeedbackAdjuster | None = None  # what the votes do to retrieval (for votes and the Home tab)
    index: IndexInfo | None = None
    admins: AdminCheck = field(default=None)  # type: ignore[assignment] - built from the settings when not given

    def __post_init__(self) -> None:
        if self.admins is None:
            self.admins = AdminCheck(self.settings.admins)
        if self.adjuster is None and self.feedback is not None:  # the composition root passes the pipeline's
            self.adjuster = FeedbackAdjuster(self.feedback)
