"""What a conversation remembers where the platform cannot be asked (Teams keeps no history a bot can
read): the earlier turns, for follow-up questions, and which answer each bot message carries, for the
votes on it. Kept as conversation state, so in Redis when it is configured."""

from __future__ import annotations

import json

from bot.core.conversation_state import ConversationState
from cache import cache_key

HISTORY_TTL = 7 * 24 * 3600
MESSAGE_TTL = 180 * 24 * 3600  # as long as the feedback store keeps answers by default
KEEP_TURNS = 10  # the pipeline uses the last few (AIE_HISTORY_TURNS)


class ConversationMemory:
    def __init__(self, state: ConversationState) -> None:
        self.state = state

    async def history(self, conversation: str) -> list[tuple[str, str]]:
        """Earlier (question, answer) turns, oldest first."""
        turns = []
        for raw in await self.state.items("turns", _turns_key(conversation)):
            try:
                question, answer = json.loads(raw)
                turns.append((str(question), str(answer)))
            except (ValueError, TypeError):
                continue
        return turns

    async def add_turn(self, conversation: str, question: str, answer: str) -> None:
        """One atomic append: turns added at once in a group chat are all kept."""
        await self.state.push("turns", _turns_key(conversation),
                              json.dumps([question, answer], ensure_ascii=False).encode(), KEEP_TURNS, HISTORY_TTL)

    async def link_message(self, conversation: str, message_id: str, answer_id: str) -> None:
        await self.state.put("message", cache_key("message", conversation, message_id), answer_id.encode(),
                             MESSAGE_TTL)

    async def answer_of(self, conversation: str, message_id: str) -> str | None:
        """The recorded answer a bot message shows (None: not known here)."""
        raw = await self.state.get("message", cache_key("message", conversation, message_id))
        return raw.decode() if raw else None


def _turns_key(conversation: str) -> str:
    # A list of turns (earlier releases kept one JSON string under "history"; those expire on their own).
    return cache_key("turns", conversation)
