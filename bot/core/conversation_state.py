"""Conversation state: the small records kept about conversations for up to 180 days — which Slack
threads are the bot's, each conversation's turns and which answer each bot message carries (see
`bot.core.memory`). Kept in the state store beside the delivery marks, so in Redis when it is configured."""

from __future__ import annotations

from bot.core.state_calls import StateCalls
from cache import Cache


class ConversationState(StateCalls):
    def __init__(self, store: Cache, workers: int = 4) -> None:
        super().__init__(store, workers, thread_name="conversations")

    async def put_if_absent(self, key: str, value: bytes, ttl: int) -> bool:
        """Store `value` unless `key` holds something already (Redis SET NX); True when this call stored it."""
        return await self._run(self.store.add, key, value, ttl)

    async def put(self, namespace: str, key: str, value: bytes, ttl: int) -> None:
        await self._run(self.store.set, namespace, key, value, ttl)

    async def get(self, namespace: str, key: str) -> bytes | None:
        return await self._run(self.store.get, namespace, key)

    async def push(self, namespace: str, key: str, value: bytes, keep: int, ttl: int) -> None:
        """Append to a list atomically (see `Cache.push`), keeping its last `keep` items."""
        await self._run(self.store.push, namespace, key, value, keep, ttl)

    async def items(self, namespace: str, key: str) -> list[bytes]:
        return await self._run(self.store.items, namespace, key)
