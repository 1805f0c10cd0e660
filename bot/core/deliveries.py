"""Delivery marks: what a platform delivered and the bot handled already — a redelivered event or
activity, the twin events of one Slack mention — so it is handled once, on every replica."""

from __future__ import annotations

from bot.core.state_calls import StateCalls
from cache import Cache, cache_key

MARK = b"1"


class DeliveryMarks(StateCalls):
    def __init__(self, store: Cache, workers: int = 4) -> None:
        super().__init__(store, workers, thread_name="deliveries")

    async def first_delivery(self, kind: str, *ids: str, ttl: int) -> bool:
        """True the first time a platform delivers the event `ids` name (a redelivery, or the twin event of
        one message, is False on every replica: Redis SET NX); `kind` names what is delivered, e.g. "event"."""
        return await self._run(self.store.add, cache_key(kind, *ids), MARK, ttl)
