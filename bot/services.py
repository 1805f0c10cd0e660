"""What the Slack listeners need, assembled by the composition root."""

from __future__ import annotations

from dataclasses import dataclass

from bot.answering import Answerer
from bot.config import SlackSettings
from bot.reindex import Reindexer
from cache import Cache
from rag.feedback import FeedbackStore


@dataclass
class BotServices:
    answerer: Answerer
    feedback: FeedbackStore
    reindexer: Reindexer
    dedup: Cache  # SET NX store for events and questions (Redis when configured)
    settings: SlackSettings
