"""What the Slack listeners need, assembled by the composition root."""

from __future__ import annotations

from dataclasses import dataclass

from bot.answering import Answerer
from bot.config import SlackSettings
from bot.dedup import Dedup
from bot.reindex import Reindexer
from rag.feedback import FeedbackStore


@dataclass
class BotServices:
    answerer: Answerer
    feedback: FeedbackStore
    reindexer: Reindexer
    dedup: Dedup  # events, questions and bot threads seen (Redis when configured)
    settings: SlackSettings
