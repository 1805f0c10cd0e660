"""The core's ReplySink for Teams, on the SDK's streaming response.

In a personal chat the answer streams: an informative update ("Searching the knowledge base…"), text
chunks at the SDK's interval, then the final message. Teams allows no streaming in channels and group
chats: there a typing indicator runs until the one final message. The final message is the finished
answer — its text, native citations, the AI-generated label and the (custom) feedback loop. When the user
presses Stop, Teams refuses the stream's later updates: the answer ends where it is, and the model stops."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Self

import aiohttp
from microsoft_agents.activity import Activity, ClientCitation
from microsoft_agents.hosting.core import TurnContext
from microsoft_agents.hosting.core.app.streaming import StreamingResponse
from microsoft_agents.hosting.core.app.typing_indicator import TypingIndicator, TypingOptions
from tenacity import AsyncRetrying, RetryCallState, retry_if_exception, stop_after_attempt

from bot.core.answering import UNSUPPORTED, WARNING, AnswerStopped, DeliveryError, answer_notes, slot_lent
from bot.core.assistant import Assistant
from bot.teams.citations import cut, held_back, neutral
from bot.teams.parts import Part, answer_parts
from rag.types import Answer

_log = logging.getLogger(__name__)

SEARCHING = "Searching the knowledge base…"
NOTE_MARKS = {WARNING: "⚠️", UNSUPPORTED: "❔"}
INFORMATIVE_LIMIT = 1000  # Teams' limit for an informative update
# Teams sends each streamed update with the whole text so far: beyond this the rest waits for the final
# messages (bot.teams.parts), which a message's 40 KB would otherwise refuse.
STREAM_CHARS = 8000
RETRIES, MAX_WAIT = 3, 10.0


class AnswerStream(StreamingResponse):
    """The SDK's streaming response, with what our answers need beyond it: no streaming where Teams allows
    none, and a final message that is the finished answer — after streaming, the citation check may still
    move or drop markers, so the final text is not always the streamed pieces put together — with
    citations built to Teams' limits (see bot.teams.citations)."""

    def __init__(self, context: TurnContext, *, streaming: bool) -> None:
        super().__init__(context)
        if not streaming:
            self._is_streaming_channel = False

    async def _handle_send_error(self, err: Exception) -> None:
        # The SDK tells a stopped or refused stream (403, or a 400 saying streaming is off) from a failure by
        # looking for "403" anywhere in the error's text, which holds the URL: a port or conversation id with
        # "403" in it would silently swallow a failed final message. Only those statuses go to the SDK.
        if isinstance(err, aiohttp.ClientResponseError) and not _stream_refusal(err):
            raise err
        await super()._handle_send_error(err)

    @property
    def stopped_by_user(self) -> bool:
        """Whether Teams refused an update because the user pressed Stop (the SDK then sends nothing more)."""
        return bool(getattr(self, "_user_cancelled", False))

    async def end_with(self, text: str, citations: list[ClientCitation]) -> None:
        self._message = text
        self._citations = list(citations)
        await self.end_stream()


def _stream_refusal(err: aiohttp.ClientResponseError) -> bool:
    return err.status == 403 or (err.status == 400 and "streaming api is not enabled" in str(err.message).lower())


@asynccontextmanager
async def delivering() -> AsyncIterator[None]:
    """The connector's failures as the core's DeliveryError (status only: response bodies stay out of logs)."""
    try:
        yield
    except aiohttp.ClientResponseError as exc:
        raise DeliveryError(f"HTTP {exc.status} from the Bot Connector") from exc
    except (TimeoutError, aiohttp.ClientError) as exc:
        raise DeliveryError(f"{type(exc).__name__} talking to the Bot Connector") from exc


def _retryable(exc: BaseException) -> bool:
    return isinstance(exc, aiohttp.ClientResponseError) and (exc.status == 429 or exc.status >= 500)


def _wait(state: RetryCallState) -> float:
    """A 429's Retry-After, else 0.5 s doubling."""
    exc = state.outcome.exception()
    return _retry_after(exc) if exc.status == 429 else 0.5 * 2 ** (state.attempt_number - 1)


def _told(state: RetryCallState) -> None:
    _log.warning("Bot Connector answered %s; retrying in %.1f s", state.outcome.exception().status,
                 state.next_action.sleep)


async def _lent_sleep(seconds: float) -> None:
    async with slot_lent():  # an answer waiting here lets the next question have its slot
        await asyncio.sleep(seconds)


async def _retrying(context: TurnContext, payload: object, call: Callable[[], Awaitable]) -> object:
    """Retry a send or update the connector refused with 429 (after Retry-After) or 5xx."""
    async for attempt in AsyncRetrying(retry=retry_if_exception(_retryable), stop=stop_after_attempt(RETRIES + 1),
                                       wait=_wait, sleep=_lent_sleep, before_sleep=_told, reraise=True):
        with attempt:
            result = await call()
    return result


def _retry_after(exc: aiohttp.ClientResponseError) -> float:
    try:
        return min(MAX_WAIT, max(0.0, float((exc.headers or {}).get("Retry-After", 1))))
    except ValueError:
        return 1.0


def with_retries(context: TurnContext) -> TurnContext:
    context.on_send_activities(_retrying)
    context.on_update_activity(_retrying)
    return context


class TeamsReply:
    """Use as `async with TeamsReply(...) as reply:` — the typing indicator stops when the block ends."""

    def __init__(self, context: TurnContext, assistant: Assistant | None, question: str, *,
                 streaming: bool) -> None:
        self.context = context
        self.assistant = assistant  # records the turn and which messages show the answer
        self.question = question
        self.stream = AnswerStream(context, streaming=streaming)
        self.message_ids: list[str] = []  # what the connector called the messages of this reply
        self._answer_id: str | None = None
        self._pending = ""
        self._streamed = 0  # characters queued for streaming
        self._typing = None if streaming else TypingIndicator(
            context, typing_options=TypingOptions(initial_delay_ms=0, interval_ms=3000))
        context.on_send_activities(self._remember_ids)

    async def __aenter__(self) -> Self:
        if self._typing is not None:
            await self._typing.__aenter__()
        self.stream.queue_informative_update(cut(SEARCHING, INFORMATIVE_LIMIT))
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        if self._typing is not None:
            await self._typing.__aexit__(*exc_info)

    async def _remember_ids(self, context: TurnContext, activities: list[Activity], call: Callable[[], Awaitable]):
        """Link every message of this reply to its recorded answer as soon as the connector names it, so that
        a vote on it finds the answer (the SDK pauses after each send before returning)."""
        responses = await call()
        ids = [r.id for r in responses or [] if getattr(r, "id", None) and r.id not in self.message_ids]
        self.message_ids += ids
        if self._answer_id:
            await self._link(ids)
        return responses

    async def _link(self, message_ids: list[str]) -> None:
        if self.assistant is not None and self._answer_id:
            for message_id in message_ids:
                await self.assistant.link_message(self.context.activity.conversation.id, message_id, self._answer_id)

    async def append(self, text: str) -> None:
        if self.stream.stopped_by_user:  # stop generating: nothing more can reach the user
            raise AnswerStopped("stopped in Teams")
        ready, self._pending = held_back(self._pending + text)
        if ready and self._streamed < STREAM_CHARS:
            self._streamed += len(ready)
            self.stream.queue_text_chunk(neutral(ready))

    async def finish(self, answer: Answer, answer_id: str | None) -> None:
        text = neutral(answer.text)
        notes = [f"{NOTE_MARKS[kind]} {note}" for kind, note in answer_notes(answer)]
        if notes:
            text += "\n\n" + "\n\n".join(f"_{n}_" for n in notes)
        first, *more = answer_parts(text, answer.citations)
        if self.assistant is not None:  # before it is shown: a follow-up may come at once
            await self.assistant.add_turn(self.context.activity.conversation.id, self.question, answer.text)
        self._answer_id = answer_id
        await self._link(self.message_ids)  # a stream's messages, named before its end
        async with delivering():
            await self._end(self.stream, first, answer_id)
            for part in more:  # messages of their own, after the streamed one
                await self._end(AnswerStream(self.context, streaming=False), part, answer_id)

    @staticmethod
    async def _end(stream: AnswerStream, part: Part, answer_id: str | None) -> None:
        stream.set_generated_by_ai_label(True)
        stream.set_feedback_loop(answer_id is not None)
        stream.set_feedback_loop_type("custom")  # our form: the answer's sources, each to judge (bot.teams.feedback)
        await stream.end_with(part.text, part.citations)

    async def fail(self, message: str) -> None:
        self._pending = ""
        async with delivering():
            await self.stream.end_with(message, [])

    async def notice(self, message: str) -> None:
        async with delivering():
            await self.context.send_activity(message)
