"""Buttons on answers: 👍/👎 (a 👎 then asks why, optionally), "Show source" for a footnote, and in the
source modal "This source is wrong" / "This source helped"."""

from __future__ import annotations

import asyncio
import logging

from slack_bolt.async_app import AsyncApp
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.core.scopes.documents import may_show
from bot.core.votes import vote_on_answer
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
from bot.slack.places import scope_in
from bot.slack.services import SlackServices
from rag.feedback import REASONS, CitedChunk, RecordedAnswer, citation_target
from rag.prompt import detect_language
from rag.types import Chunk, Scope

_log = logging.getLogger(__name__)

RECORDED = "Thanks — your feedback is recorded."
UPDATED = "Thanks — your vote is updated."
GONE = "Sorry, that answer is no longer on record."
PICK_A_REASON = "Pick one of these — or close this window to keep just your vote."
HELPED = ":white_check_mark: Thanks — marked as helpful."
FLAGGED = ":white_check_mark: Marked as a wrong source — thanks."
NOT_HERE = ("Sorry, I can't show that source here: it is not among the documents answers in this conversation "
            "may use.")


def _split(value: str) -> tuple[str, int]:
    answer_id, _, marker = value.partition(":")
    return answer_id, int(marker)


def cited_chunk(cited: CitedChunk) -> Chunk:
    """A cited passage as the source modal shows it (the text as it was cited, not as it is now)."""
    return Chunk(cited.chunk_id, cited.file, cited.title, (), cited.text, 0, len(cited.text), None, None, "", "",
                 cited.url)


def register(app: AsyncApp, services: SlackServices) -> None:
    store = services.feedback

    @app.action(FEEDBACK)
    async def on_feedback(ack, body: dict, action: dict, client: AsyncWebClient) -> None:
        await ack()
        direction, _, answer_id = action["value"].partition(":")
        helpful = direction == "up"
        user, channel = body["user"]["id"], body["channel"]["id"]
        message = body.get("message", {})
        thread_ts = message.get("thread_ts") or message.get("ts")
        new = await vote_on_answer(store, answer_id, user, helpful, channel, "slack")
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
            await asyncio.to_thread(store.set_reason, answer_id, user, reason, comment)
        except KeyError:
            await ack(response_action="update", view=notice_modal("Thanks for the feedback", GONE))
            return
        await ack(response_action="update", view=reason_thanks(reason, (comment or "").strip() or None))

    @app.action(SHOW_SOURCE)
    async def on_show_source(ack, body: dict, action: dict, client: AsyncWebClient) -> None:
        await ack()
        answer_id, marker = _split(action["value"])
        recorded = await asyncio.to_thread(store.answer, answer_id)
        if recorded is None or not 1 <= marker <= len(recorded.citations):
            return
        cited = recorded.citations[marker - 1]
        channel, user = (body.get("channel") or {}).get("id") or "", body["user"]["id"]
        scope = await scope_in(services, channel, user)
        documents = await asyncio.to_thread(services.documents)
        if not may_show(documents, scope, cited.file, where_answered=recorded.channel == channel):
            _log.info("source %s of answer %s not shown in %s: outside its scope", marker, answer_id, channel)
            await client.views_open(trigger_id=body["trigger_id"], view=notice_modal("Source", NOT_HERE))
            return
        await client.views_open(trigger_id=body["trigger_id"], view=source_modal(
            cited_chunk(cited), cited.location, title=f"Source [{marker}]", vote_value=action["value"]))

    @app.action(WRONG_SOURCE)
    @app.action(HELPFUL_SOURCE)
    async def on_source_vote(ack, body: dict, action: dict, client: AsyncWebClient) -> None:
        await ack()
        answer_id, marker = _split(action["value"])
        user = body["user"]["id"]
        value = 1 if action["action_id"] == HELPFUL_SOURCE else -1
        admin = await services.admins.is_admin(client, user)
        text = await asyncio.to_thread(_vote_on_source, services, answer_id, marker, user, value, admin)
        view = body["view"]
        await client.views_update(view_id=view["id"], hash=view.get("hash"), view=vote_confirmation(view, text))


def _vote_on_source(services: SlackServices, answer_id: str, marker: int, user: str, value: int, admin: bool) -> str:
    """Record a vote on a cited passage (blocking); the confirmation, saying what the vote does now."""
    recorded = services.feedback.answer(answer_id)
    if recorded is None or not 1 <= marker <= len(recorded.citations):
        return GONE
    services.feedback.vote(answer_id, user, citation_target(marker), value, recorded.channel, admin=admin)
    if value > 0:
        return HELPED
    demoted = _demoted_now(services, recorded, recorded.citations[marker - 1])
    if demoted is None:  # cannot tell: say what the rules do
        demoted = admin
    if demoted:
        why = "an admin's flag counts at once" if admin else "others flagged it too"
        return f"{FLAGGED} It now ranks lower for similar questions ({why})."
    if admin:
        return f"{FLAGGED} Others said this passage helped, so it does not rank lower yet."
    min_voters = services.adjuster.rules.min_voters if services.adjuster else 2
    others = "another person agrees" if min_voters == 2 else f"{min_voters} people in all agree"
    return f"{FLAGGED} It will rank lower for similar questions once {others}, or an admin confirms."


def _demoted_now(services: SlackServices, recorded: RecordedAnswer, cited: CitedChunk) -> bool | None:
    """Whether the votes now demote the passage for the answer's question where it was asked (None: no way
    to tell)."""
    if services.adjuster is None or services.answerer is None:
        return None
    try:
        vector = services.answerer.pipeline.finder.query_vector(recorded.question, recorded.index_version)
    except Exception:  # noqa: BLE001 - e.g. the embedder is unreachable: the vote is kept anyway
        _log.warning("could not tell whether the flag demotes the passage", exc_info=True)
        return None
    # Votes count within the collections they were given in: the answer's, as recorded.
    where = Scope.parse(recorded.scope)
    return cited.chunk_id in services.adjuster.demotions(vector, detect_language(recorded.question), where)
