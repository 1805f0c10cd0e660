"""Buttons on answers: 👍/👎 (a 👎 then asks why, optionally), "Show source" for a footnote, and in the
source modal "This source is wrong" / "This source helped"."""

from __future__ import annotations

import logging

from slack_bolt.async_app import AsyncApp
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.core.review import GONE, cited_passage
from bot.core.votes import REASONS, RECORDED, UPDATED
from bot.slack.blocks import (
    COMMENT_ACTION,
    COMMENT_BLOCK,
    FEEDBACK,
    HELPFUL_SOURCE,
    REASON_ACTION,
    REASON_BLOCK,
    REASON_VIEW,
    SHOW_SOURCE,
    WRONG_SOURCE,
    notice_modal,
    reason_modal,
    reason_thanks,
    source_modal,
    vote_confirmation,
)
from bot.core.not_kept import NotKept
from bot.slack.not_kept import telling_not_kept
from bot.slack.places import scope_in
from bot.slack.services import SlackServices

_log = logging.getLogger(__name__)

PICK_A_REASON = "Pick one of these — or close this window to keep just your vote."
NOT_HERE = ("Sorry, I can't show that source here: it is not among the documents answers in this conversation "
            "may use.")


def _split(value: str) -> tuple[str, int]:
    answer_id, _, marker = value.partition(":")
    return answer_id, int(marker)


def register(app: AsyncApp, services: SlackServices) -> None:
    assistant = services.assistant

    @app.action(FEEDBACK)
    @telling_not_kept
    async def on_feedback(ack, body: dict, action: dict, client: AsyncWebClient) -> None:
        await ack()
        direction, _, answer_id = action["value"].partition(":")
        helpful = direction == "up"
        user, channel = body["user"]["id"], body["channel"]["id"]
        message = body.get("message", {})
        thread_ts = message.get("thread_ts") or message.get("ts")
        new = await assistant.vote_on_answer(answer_id, user, helpful, channel, "slack")
        if new is None:
            await client.chat_postEphemeral(channel=channel, user=user, text=GONE, thread_ts=thread_ts)
            return
        if not helpful and body.get("trigger_id"):
            try:  # the 👎 is kept whatever happens to this optional question
                await client.views_open(trigger_id=body["trigger_id"], view=reason_modal(answer_id))
                return
            except SlackApiError as exc:  # e.g. the trigger expired: say thanks the usual way
                _log.warning("could not ask for a reason: %s", exc.response.get("error"))
        await client.chat_postEphemeral(channel=channel, user=user, text=RECORDED if new else UPDATED,
                                        thread_ts=thread_ts)

    @app.view(REASON_VIEW)
    async def on_reason(ack, body: dict, view: dict) -> None:
        user, answer_id = body["user"]["id"], view.get("private_metadata") or ""
        values = (view.get("state") or {}).get("values") or {}
        chosen = ((values.get(REASON_BLOCK) or {}).get(REASON_ACTION) or {}).get("selected_option") or {}
        comment = ((values.get(COMMENT_BLOCK) or {}).get(COMMENT_ACTION) or {}).get("value")
        reason = chosen.get("value")
        if reason not in REASONS:
            await ack(response_action="errors", errors={REASON_BLOCK: PICK_A_REASON})
            return
        try:
            given = await assistant.give_reason(answer_id, user, reason, comment)
        except NotKept as exc:
            await ack(response_action="errors", errors={REASON_BLOCK: str(exc)})
            return
        if not given:
            await ack(response_action="update", view=notice_modal("Thanks for the feedback", GONE))
            return
        await ack(response_action="update", view=reason_thanks(reason, (comment or "").strip() or None))

    @app.action(SHOW_SOURCE)
    async def on_show_source(ack, body: dict, action: dict, client: AsyncWebClient) -> None:
        await ack()
        answer_id, marker = _split(action["value"])
        channel, user = (body.get("channel") or {}).get("id") or "", body["user"]["id"]
        scope = await scope_in(assistant, channel, user)
        shown = await assistant.source_to_show(answer_id, marker, scope, channel)
        if shown.cited is None:
            return
        if not shown.allowed:
            await client.views_open(trigger_id=body["trigger_id"], view=notice_modal("Source", NOT_HERE))
            return
        cited = shown.cited
        await client.views_open(trigger_id=body["trigger_id"], view=source_modal(
            cited_passage(cited), cited.location, title=f"Source [{marker}]", vote_value=action["value"]))

    @app.action(WRONG_SOURCE)
    @app.action(HELPFUL_SOURCE)
    @telling_not_kept
    async def on_source_vote(ack, body: dict, action: dict, client: AsyncWebClient) -> None:
        await ack()
        answer_id, marker = _split(action["value"])
        user = body["user"]["id"]
        value = 1 if action["action_id"] == HELPFUL_SOURCE else -1
        admin = await services.admins.is_admin(client, user)
        voted = await assistant.vote_on_source(answer_id, marker, user, value, admin)
        text = f":white_check_mark: {voted.sentence()}" if voted.recorded else GONE
        view = body["view"]
        await client.views_update(view_id=view["id"], hash=view.get("hash"), view=vote_confirmation(view, text))
