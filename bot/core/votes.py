"""Recording a 👍/👎 on a whole answer, from any platform, in the one feedback store, and the reasons a 👎
may give (`REASONS`, as each surface offers them)."""

from __future__ import annotations

import asyncio

from rag.feedback import ANSWER, REASONS, FeedbackStore

__all__ = ["REASONS", "vote_on_answer"]


async def vote_on_answer(store: FeedbackStore, answer_id: str, user: str, helpful: bool, conversation: str,
                         platform: str, comment: str | None = None) -> bool | None:
    """True for a new vote, False for a changed one, None when the answer is not (or no longer) on record."""

    def record() -> bool | None:
        try:
            new = store.vote(answer_id, user, ANSWER, 1 if helpful else -1, conversation, platform=platform)
        except KeyError:
            return None
        if comment and comment.strip():
            store.set_comment(answer_id, user, comment)
        return new

    return await asyncio.to_thread(record)  # fsync'd writes: off the event loop
