"""Stream an answer into a Slack thread, then replace it with the finished, cited message.

Preferred: Slack's streaming methods (chat.startStream / appendStream / stopStream through
slack_sdk's `chat_stream`), flushed on the first text, then every `buffer_chars` or `flush_seconds`.
Fallback, when streaming is unavailable or breaks: a placeholder message edited with chat.update at
most once per `fallback_seconds`. Either way the final blocks (text, footnotes, buttons) replace the
streamed text, split over several messages if Slack's limits require it.

Only `stopped_by_user` means the user pressed stop. Any other streaming error — among them the stream
expiring on Slack's side (`message_not_in_streaming_state`) — continues in a placeholder message, and
the answer is finished as usual.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import aiohttp
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_chat_stream import AsyncChatStream
from slack_sdk.web.async_client import AsyncWebClient

from bot.core.answering import AnswerStopped, DeliveryError
from bot.slack.blocks import answer_blocks, escape, paginate, plain_summary
from rag.types import Answer

_log = logging.getLogger(__name__)

UPDATE_TEXT_LIMIT = 3900  # chat.update accepts 4,000 characters of text
STREAM_APPEND_LIMIT = 12_000
STOPPED_BY_USER = "stopped_by_user"
# Slack could not be reached or did not answer in time (after slack_sdk's own retries).
UNREACHABLE = (aiohttp.ClientError, asyncio.TimeoutError)


@asynccontextmanager
async def delivering() -> AsyncIterator[None]:
    """Slack's errors as the core's DeliveryError (with Slack's error code as the reason, or what kind of
    connection failure it was)."""
    try:
        yield
    except SlackApiError as exc:
        raise DeliveryError(str(exc.response.get("error") or exc.response.status_code)) from exc
    except UNREACHABLE as exc:
        raise DeliveryError(f"{type(exc).__name__} talking to Slack") from exc


class ThreadReply:
    """The core's ReplySink for a Slack thread."""

    def __init__(
        self,
        client: AsyncWebClient,
        channel: str,
        thread_ts: str,
        *,
        user_id: str | None,
        team_id: str | None,
        buffer_chars: int = 120,
        flush_seconds: float = 0.5,
        fallback_seconds: float = 1.0,
        use_streaming: bool = True,
    ) -> None:
        self.client = client
        self.channel = channel
        self.thread_ts = thread_ts
        self.user_id = user_id
        self.team_id = team_id
        self.buffer_chars = buffer_chars
        self.flush_seconds = flush_seconds
        self.fallback_seconds = fallback_seconds
        self.use_streaming = use_streaming
        self.mode = "stream" if use_streaming else "update"
        self.message_ts: list[str] = []  # every message this reply occupies, in order
        self._stream: AsyncChatStream | None = None
        self._pending = ""
        self._shown = ""  # text already visible in the current message
        self._new_message = True  # the next fallback update starts a message of its own
        self._last_flush = 0.0
        self._line_start = True  # the text sent so far ends a line

    async def append(self, text: str) -> None:
        async with delivering():
            await self._append(text)

    async def _append(self, text: str) -> None:
        if not text:
            return
        self._pending += text
        now = time.monotonic()
        first = not self.message_ts and not self._stream
        if self.mode == "update":  # chat.update is rate limited: time alone decides, however much text waits
            due = now - self._last_flush >= self.fallback_seconds
        else:
            due = now - self._last_flush >= self.flush_seconds or len(self._pending) >= self.buffer_chars
        if first or due:
            await self._flush()

    async def _flush(self) -> None:
        if not self._pending:
            return
        text, self._pending = self._escaped(self._pending), ""
        self._last_flush = time.monotonic()
        if self.mode == "stream":
            try:
                await self._stream_append(text)
                return
            except (SlackApiError, *UNREACHABLE) as exc:
                error = exc.response.get("error", "") if isinstance(exc, SlackApiError) else type(exc).__name__
                if error == STOPPED_BY_USER:
                    raise AnswerStopped(error) from None
                _log.warning("Slack streaming failed (%s); falling back to message updates", error)
                await self._end_stream()
                self.mode = "update"
                self._new_message = True  # what was streamed stays; the rest goes into a new message
        await self._update_append(text)

    def _escaped(self, text: str) -> str:
        """Escaped like the final message; a `>` continuing a line is not a quote marker."""
        escaped = escape(text)
        if escaped.startswith(">") and not self._line_start:
            escaped = "&gt;" + escaped[1:]
        self._line_start = text.endswith("\n")
        return escaped

    async def _stream_append(self, text: str) -> None:
        if self._stream is not None and len(self._shown) + len(text) > STREAM_APPEND_LIMIT:
            await self._end_stream()  # one streamed message holds a bounded amount: start another
        if self._stream is None:
            self._stream = await self.client.chat_stream(
                channel=self.channel, thread_ts=self.thread_ts, recipient_user_id=self.user_id,
                recipient_team_id=self.team_id, buffer_size=1,
            )
            self._shown = ""
        await self._stream.append(markdown_text=text)
        if self._stream.ts and (not self.message_ts or self.message_ts[-1] != self._stream.ts):
            self.message_ts.append(self._stream.ts)
        self._shown += text

    async def _end_stream(self, rest: str = "") -> None:
        """Stop the stream, with `rest` (escaped) as its last text if it still fits."""
        stream, self._stream = self._stream, None
        if stream is not None and stream.ts:
            if len(self._shown) + len(rest) > STREAM_APPEND_LIMIT:
                rest = ""  # the final message shows it anyway
            try:
                await stream.stop(markdown_text=rest or None)
            except SlackApiError as exc:
                _log.info("stopping the stream failed: %s", exc.response.get("error"))
            except UNREACHABLE as exc:
                _log.info("stopping the stream failed: %s", type(exc).__name__)

    async def _update_append(self, text: str) -> None:
        if self._new_message or len(self._shown) + len(text) > UPDATE_TEXT_LIMIT:
            self._shown = text  # a placeholder of its own, or the current one is full
            response = await self.client.chat_postMessage(channel=self.channel, thread_ts=self.thread_ts,
                                                          text=self._shown)
            self.message_ts.append(response["ts"])
            self._new_message = False
            return
        self._shown += text
        await self.client.chat_update(channel=self.channel, ts=self.message_ts[-1], text=self._shown)

    async def finish(self, answer: Answer, answer_id: str | None) -> None:
        async with delivering():
            try:
                blocks = answer_blocks(answer, answer_id)
            except BaseException:  # whatever it was, the draft is shown whole and stops streaming
                await self._settle()
                raise
            await self.finish_blocks(answer.text, blocks)

    async def _settle(self) -> None:
        """Show the rest of the draft where it is, and stop the stream."""
        rest, self._pending = self._pending, ""
        if rest and self.mode == "update" and self.message_ts:
            await self._update_append(self._escaped(rest))
        else:
            await self._end_stream(self._escaped(rest) if rest else "")

    async def finish_blocks(self, text: str, blocks: list[dict]) -> list[str]:
        """Replace what was streamed with the final blocks; returns the message timestamps used."""
        rest, self._pending = self._pending, ""
        # The whole draft stays readable should the final update fail.
        await self._end_stream(self._escaped(rest) if rest else "")
        pages = paginate(blocks)
        summary = plain_summary(text)
        used: list[str] = []
        for n, page in enumerate(pages):
            if n < len(self.message_ts):
                await self.client.chat_update(channel=self.channel, ts=self.message_ts[n], text=summary, blocks=page)
                used.append(self.message_ts[n])
            else:
                response = await self.client.chat_postMessage(channel=self.channel, thread_ts=self.thread_ts,
                                                              text=summary, blocks=page)
                used.append(response["ts"])
        for extra in self.message_ts[len(pages) :]:
            await self.client.chat_delete(channel=self.channel, ts=extra)
        self.message_ts = used
        return used

    async def notice(self, message: str) -> None:
        """A short message of its own in the thread, after whatever this reply already shows."""
        async with delivering():
            await self.client.chat_postMessage(channel=self.channel, thread_ts=self.thread_ts, text=message)

    async def fail(self, message: str) -> None:
        """End with a short, human error message (never a stack trace)."""
        async with delivering():
            await self._fail(message)

    async def _fail(self, message: str) -> None:
        self._pending = ""
        await self._end_stream()
        if self.message_ts:
            await self.client.chat_update(channel=self.channel, ts=self.message_ts[0], text=message, blocks=[])
            for extra in self.message_ts[1:]:
                await self.client.chat_delete(channel=self.channel, ts=extra)
        else:
            await self.client.chat_postMessage(channel=self.channel, thread_ts=self.thread_ts, text=message)
