"""Conversation memory under concurrency: every turn added at once (a group chat, two replicas) is kept."""

from __future__ import annotations

import asyncio

import pytest

from bot.core.conversation_state import ConversationState
from bot.core.memory import KEEP_TURNS, ConversationMemory
from cache import MemoryCache, RedisCache


@pytest.fixture(params=["memory", "redis"])
def replicas(request, redis_process) -> list[ConversationMemory]:
    """Two processes' memories of the same conversations (in process: one store shared by two)."""
    if request.param == "memory":
        store = MemoryCache()
        return [ConversationMemory(ConversationState(store)), ConversationMemory(ConversationState(store))]
    return [ConversationMemory(ConversationState(RedisCache(redis_process.url))) for _ in range(2)]


def test_turns_added_at_once_are_all_kept(replicas):
    async def burst(conversation: str) -> list[tuple[str, str]]:
        await asyncio.gather(*(replicas[n % 2].add_turn(conversation, f"question {n}", f"answer {n}")
                               for n in range(KEEP_TURNS)))
        return await replicas[0].history(conversation)

    async def rounds():
        return await asyncio.gather(*(burst(f"19:group-{r}@thread.v2") for r in range(5)))

    for history in asyncio.run(rounds()):
        assert sorted(history) == sorted((f"question {n}", f"answer {n}") for n in range(KEEP_TURNS))


def test_only_the_latest_turns_are_kept_oldest_first(replicas):
    async def talk():
        for n in range(KEEP_TURNS + 3):
            await replicas[n % 2].add_turn("a:personal", f"q{n}", f"a{n}")
        return await replicas[1].history("a:personal"), await replicas[0].history("another")

    history, other = asyncio.run(talk())
    assert history == [(f"q{n}", f"a{n}") for n in range(3, KEEP_TURNS + 3)]
    assert other == []
