"""Recording a 👍/👎 on a whole answer, from any platform, in the one feedback store, and the reasons a 👎
may give (`REASONS`, as each surface offers them)."""

from __future__ import annotations

import asyncio

from rag.feedback import ANSWER, REASONS, FeedbackStore

__all__ = ["RECORDED", "REASONS", "UPDATED", "cited_locations", "give_reason", "vote_on_answer"]

RECORDED = "Thanks — your feedback is recorded."
UPDATED = "Thanks — your vote is updated."


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


async def give_reason(store: FeedbackStore, answer_id: str, user: str, reason: str, comment: str | None) -> bool:
    """Keep why `user` down-voted an answer (`reason`, one of REASONS) and their optional comment; False when
    their 👎 on it is not (or no longer) on record."""

    def record() -> bool:
        try:
            store.set_reason(answer_id, user, reason, comment)
        except KeyError:
            return False
        return True

    return await asyncio.to_thread(record)


async def cited_locations(store: FeedbackStore, answer_id: str | None) -> list[str] | None:
    """Where each of an answer's citations comes from, as its footnotes said it; None when the answer is not
    (or no longer) on record."""
    recorded = await asyncio.to_thread(store.answer, answer_id) if answer_id else None
    return None if recorded is None else [c.location for c in recorded.citations]
