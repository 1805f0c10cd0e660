"""Answer one question in a Slack thread: stream, finish with footnotes and buttons, record for feedback."""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Awaitable
from dataclasses import dataclass

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.blocks import answer_blocks
from bot.config import SlackSettings
from bot.streaming import StreamStopped, ThreadReply
from rag.feedback import CitedChunk, FeedbackStore
from rag.index.snapshot import IndexNotFoundError
from rag.pipeline import AnswerPipeline, QuestionTooLong
from rag.types import Answer

_log = logging.getLogger(__name__)
_MENTION = re.compile(r"<@[UW][A-Z0-9]+(?:\|[^>]*)?>")

NO_INDEX = "The knowledge base has not been built yet — an admin can build it with `/reindex`."
FAILED = "Sorry, something went wrong while answering. Please try again in a moment."
NOT_FINISHED = ("Sorry, I could not put the finished answer in place, so its sources and buttons are "
                "missing. Please ask again in a moment.")


def clean_question(text: str) -> str:
    """The question without @-mentions and Slack's link/formatting wrappers."""
    text = _MENTION.sub(" ", text or "")
    text = re.sub(r"<(https?://[^|>]+)\|([^>]+)>", r"\2", text)
    text = re.sub(r"<(https?://[^>]+)>", r"\1", text)
    return " ".join(text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&").split())


@dataclass
class Question:
    text: str
    channel: str
    thread_ts: str
    user: str
    team: str | None
    history: list[tuple[str, str]]
    event_id: str = ""


class Answerer:
    def __init__(self, pipeline: AnswerPipeline, feedback: FeedbackStore, settings: SlackSettings) -> None:
        self.pipeline = pipeline
        self.feedback = feedback
        self.settings = settings
        self._slots = asyncio.Semaphore(settings.max_concurrent_answers)

    async def answer(self, client: AsyncWebClient, question: Question) -> Answer | None:
        async with self._slots:
            return await self._answer(client, question)

    async def _answer(self, client: AsyncWebClient, question: Question) -> Answer | None:
        reply = ThreadReply(
            client, question.channel, question.thread_ts, user_id=question.user, team_id=question.team,
            buffer_chars=self.settings.stream_buffer_chars, fallback_seconds=self.settings.fallback_update_seconds,
        )
        final: Answer | None = None
        stream = self.pipeline.answer(question.text, question.history)
        try:
            async for item in stream:
                if isinstance(item, Answer):
                    final = item
                else:
                    await reply.append(item)
        except StreamStopped:
            _log.info("user stopped the answer", extra={"event_id": question.event_id})
            await stream.aclose()
            return None
        except QuestionTooLong as exc:
            await self._fail(reply, exc.message, question)
            return None
        except IndexNotFoundError:
            await self._fail(reply, NO_INDEX, question)
            return None
        except Exception:  # noqa: BLE001 - the user gets a short message; the log gets the details
            _log.exception("answering failed", extra={"event_id": question.event_id})
            await self._fail(reply, FAILED, question)
            return None
        if final is None:
            await self._fail(reply, FAILED, question)
            return None
        answer_id = await asyncio.to_thread(self._record, final, question)  # an fsync'd write: off the loop
        try:
            await reply.finish(final.text, answer_blocks(final, answer_id))
        except Exception as exc:  # noqa: BLE001 - Slack refused the final message, or its blocks failed to build
            reason = exc.response.get("error") if isinstance(exc, SlackApiError) else repr(exc)
            _log.error("could not post the final answer: %s", reason, extra={"event_id": question.event_id})
            await self._tell(reply.notice(NOT_FINISHED), question)
        return final

    def _record(self, answer: Answer, question: Question) -> str:
        cited = [CitedChunk(c.chunk.id, c.chunk.file, c.location, c.chunk.text, c.chunk.title, c.chunk.url)
                 for c in answer.citations]
        vector = self.pipeline.finder.query_vector(answer.question, answer.index_version)
        return self.feedback.record_answer(answer.question, answer.text, cited, answer.index_version,
                                           question.channel, question.user, vector)

    async def _fail(self, reply: ThreadReply, message: str, question: Question) -> None:
        await self._tell(reply.fail(message), question)

    async def _tell(self, telling: Awaitable[None], question: Question) -> None:
        try:
            await telling
        except SlackApiError as exc:
            _log.error("could not tell the user about a failure: %s", exc.response.get("error"),
                       extra={"event_id": question.event_id})
