"""What a conversation remembers where the platform cannot be asked (Teams keeps no history a bot can
read): the earlier turns, for follow-up questions, and which answer each bot message carries, for the
votes on it. Kept in the de-duplication store, so in Redis when it is configured."""

from __future__ import annotations

import json

from bot.core.dedup import Dedup
from cache import cache_key

HISTORY_TTL = 7 * 24 * 3600
MESSAGE_TTL = 180 * 24 * 3600  # as long as the feedback store keeps answers by default
KEEP_TURNS = 10  # the pipeline uses the last few (AIE_HISTORY_TURNS)


class ConversationMemory:
    def __init__(self, dedup: Dedup) -> None:
        self.dedup = dedup

    async def history(self, conversation: str) -> list[tuple[str, str]]:
        """Earlier (question, answer) turns, oldest first."""
        raw = await self.dedup.get("history", cache_key("history", conversation))
        if raw is None:
            return []
        try:
            return [(str(q), str(a)) for q, a in json.loads(raw)]
        except (ValueError, TypeError):
            return []

    async def add_turn(self, conversation: str, question: str, answer: str) -> None:
        turns = (await self.history(conversation) + [(question, answer)])[-KEEP_TURNS:]
        await self.dedup.put("history", cache_key("history", conversation),
                             json.dumps(turns, ensure_ascii=False).encode(), HISTORY_TTL)

    async def link_message(self, conversation: str, message_id: str, answer_id: str) -> None:
        await self.dedup.put("message", cache_key("message", conversation, message_id), answer_id.encode(),
                             MESSAGE_TTL)

    async def answer_of(self, conversation: str, message_id: str) -> str | None:
        """The recorded answer a bot message shows (None: not known here)."""
        raw = await self.dedup.get("message", cache_key("message", conversation, message_id))
        return raw.decode() if raw else None
