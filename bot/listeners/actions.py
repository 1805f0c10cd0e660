"""Buttons: 👍/👎 on an answer, "Show source" for a footnote, "This source is wrong" in the source modal."""

from __future__ import annotations

import logging

from slack_bolt.async_app import AsyncApp
from slack_sdk.web.async_client import AsyncWebClient

from bot.blocks import FEEDBACK, SHOW_SOURCE, WRONG_SOURCE, source_modal
from bot.services import BotServices
from rag.feedback import ANSWER, citation_target
from rag.types import Chunk

_log = logging.getLogger(__name__)


def _split(value: str) -> tuple[str, int]:
    answer_id, _, marker = value.partition(":")
    return answer_id, int(marker)


def register(app: AsyncApp, services: BotServices) -> None:
    @app.action(FEEDBACK)
    async def on_feedback(ack, body: dict, action: dict, client: AsyncWebClient) -> None:
        await ack()
        direction, _, answer_id = action["value"].partition(":")
        user, channel = body["user"]["id"], body["channel"]["id"]
        try:
            new = services.feedback.vote(answer_id, user, ANSWER, 1 if direction == "up" else -1, channel)
            text = "Thanks — your feedback is recorded." if new else "Thanks — your vote is updated."
        except KeyError:
            text = "Sorry, that answer is no longer on record."
        message = body.get("message", {})
        await client.chat_postEphemeral(channel=channel, user=user, text=text,
                                        thread_ts=message.get("thread_ts") or message.get("ts"))

    @app.action(SHOW_SOURCE)
    async def on_show_source(ack, body: dict, action: dict, client: AsyncWebClient) -> None:
        await ack()
        answer_id, marker = _split(action["value"])
        recorded = services.feedback.answer(answer_id)
        if recorded is None or not 1 <= marker <= len(recorded.citations):
            return
        cited = recorded.citations[marker - 1]
        chunk = Chunk(cited.chunk_id, cited.file, cited.title, (), cited.text, 0, len(cited.text), None, None, "", "",
                      cited.url)
        await client.views_open(trigger_id=body["trigger_id"], view=source_modal(chunk, marker, answer_id, cited.location))

    @app.action(WRONG_SOURCE)
    async def on_wrong_source(ack, body: dict, action: dict, client: AsyncWebClient) -> None:
        await ack()
        answer_id, marker = _split(action["value"])
        user = body["user"]["id"]
        recorded = services.feedback.answer(answer_id)
        if recorded is None:
            return
        services.feedback.vote(answer_id, user, citation_target(marker), -1, recorded.channel)
        view = body["view"]
        blocks = [b for b in view["blocks"] if b.get("type") != "actions"]
        blocks.append({"type": "context", "elements": [{"type": "mrkdwn", "text":
                       ":white_check_mark: Marked as a wrong source — thanks. It will rank lower for similar questions."}]})
        await client.views_update(view_id=view["id"], hash=view.get("hash"), view={
            "type": "modal", "title": view["title"], "close": view.get("close"), "blocks": blocks})
