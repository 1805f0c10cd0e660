"""The App Home tab: published when someone opens it, and again after an admin acts on it.

Admins see the index and the feedback to review — of the documents their own scope may read, the rest
counted — with "Confirm demotion" / "Undo" / "Show passage" per flagged passage and "Reindex now" (progress
and report go to the admin's DM with the app, and the report then shows in the Home tab). Everyone else sees
what the assistant knows and how to ask it. Every admin action checks again that the person is an admin.
"""

from __future__ import annotations

import asyncio
import logging

from slack_bolt.async_app import AsyncApp
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.core.assistant import Assistant
from bot.core.review import NOT_IN_REVIEW, cited_passage
from bot.slack.blocks import cut, escape, source_modal
from bot.slack.home import (
    CONFIRM_DEMOTION,
    REINDEX_NOW,
    SHOW_PASSAGE,
    UNDO_DEMOTION,
    AdminHome,
    admin_home,
    user_home,
)
from bot.slack.listeners.commands import reindex_into
from bot.slack.not_kept import telling_not_kept
from bot.slack.places import private_scope
from bot.slack.services import SlackServices
from rag.types import Scope

_log = logging.getLogger(__name__)
HOME_BUSY = "A reindex is already running; its report will show in my Home tab when it finishes."
REINDEX_STARTED = ":hourglass_flowing_sand: Reindex started — progress and the report are in our direct messages."


async def publish_home(services: SlackServices, client: AsyncWebClient, user: str, bot_user: str | None = None,
                       notice: str | None = None, channel: str = "") -> None:
    """Publish the Home tab `user` should see (admin or not); `channel`: their direct message with the app."""
    # Only what the viewer could be answered from in their direct message with the app.
    scope = await private_scope(services.assistant, user, channel)
    if await services.admins.is_admin(client, user):
        # The admins' review keeps to the admin's own scope too (Slack's workspace admins and owners count as
        # admins): the flagged passages and down-voted answers of documents they may not read are only
        # counted. The index status and the last reindex's report stay whole: counts and file names.
        data = await _admin_data(services.assistant, scope)
        data.notice = notice
        view = admin_home(data)
    else:
        manifest = await services.assistant.manifest_for(scope)
        view = user_home(manifest, bot_user, notice)
    try:
        await client.views_publish(user_id=user, view=view)
    except SlackApiError as exc:  # e.g. not_enabled: the Home tab is switched off in the app's settings
        _log.warning("could not publish the Home tab for %s: %s", user, exc.response.get("error"))


async def _admin_data(assistant: Assistant, scope: Scope) -> AdminHome:
    review = await assistant.review(scope)
    return AdminHome(await assistant.manifest(), review.items,
                     running=assistant.current_reindex, last=assistant.last_reindex,
                     min_voters=review.min_voters, hidden=review.hidden, sources=await assistant.source_rows())


def _questions_note(questions: list[str], shown: int = 5) -> str | None:
    if not questions:
        return None
    listed = "\n".join(f"• {cut(escape(' '.join(q.split())), 300)}" for q in questions[:shown])
    more = f"\n… and {len(questions) - shown} more" if len(questions) > shown else ""
    return f"*Voted on for these questions:*\n{listed}{more}"


async def _give_verdict(assistant: Assistant, chunk_id: str, action: str, user: str, scope: Scope) -> str:
    """Confirm or undo what the votes on a passage do; the notice for the Home tab."""
    done = await assistant.give_verdict(chunk_id, action, user, scope)
    if done is None:
        return NOT_IN_REVIEW
    mark = ":leftwards_arrow_with_hook:" if action == "undo" else ":white_check_mark:"
    return f"{mark} {done.sentence(lambda text: f'*{escape(text)}*')}"


def register(app: AsyncApp, services: SlackServices) -> None:
    @app.event("app_home_opened")
    async def on_home_opened(event: dict, client: AsyncWebClient, context: dict) -> None:
        if event.get("tab") != "home":  # the Messages tab: nothing to publish
            return
        await publish_home(services, client, event["user"], context.get("bot_user_id"), channel=event.get("channel", ""))

    @app.action(CONFIRM_DEMOTION)
    @app.action(UNDO_DEMOTION)
    @telling_not_kept
    async def on_verdict(ack, body: dict, action: dict, client: AsyncWebClient, context: dict) -> None:
        await ack()
        user = body["user"]["id"]
        notice = None
        if await services.admins.is_admin(client, user):
            kind = "confirm" if action["action_id"] == CONFIRM_DEMOTION else "undo"
            scope = await private_scope(services.assistant, user)
            notice = await _give_verdict(services.assistant, action["value"], kind, user, scope)
        await publish_home(services, client, user, context.get("bot_user_id"), notice)

    @app.action(SHOW_PASSAGE)
    async def on_show_passage(ack, body: dict, action: dict, client: AsyncWebClient) -> None:
        await ack()
        user = body["user"]["id"]
        if not await services.admins.is_admin(client, user):
            return
        scope = await private_scope(services.assistant, user)
        passage = await services.assistant.passage_for_admin(action["value"], scope)
        if passage is None:
            return  # no votes, or not listed for this admin: a hand-made button value gets nothing
        cited = passage.cited
        await client.views_open(trigger_id=body["trigger_id"], view=source_modal(
            cited_passage(cited), cited.location, title="Flagged passage", note=_questions_note(passage.questions)))

    @app.action(REINDEX_NOW)
    async def on_reindex_now(ack, body: dict, client: AsyncWebClient, context: dict) -> None:
        await ack()
        user, bot_user = body["user"]["id"], context.get("bot_user_id")
        if not await services.admins.is_admin(client, user):
            await publish_home(services, client, user, bot_user)
            return
        if services.assistant.reindexing:
            await _tell(client, user, HOME_BUSY)
            await publish_home(services, client, user, bot_user)
            return
        running = asyncio.create_task(reindex_into(services, client, user, by=user))
        await asyncio.sleep(0)  # the reindex takes its lock before the Home tab is published
        await publish_home(services, client, user, bot_user, REINDEX_STARTED)
        outcome = await running
        if outcome.busy:  # another reindex won the race
            notice = HOME_BUSY
        elif outcome.ok:
            notice = ":white_check_mark: Reindex finished — the report is below (and in our direct messages)."
        else:
            notice = ":x: The reindex failed — the previous index is still serving. The reason is below."
        await publish_home(services, client, user, bot_user, notice)


async def _tell(client: AsyncWebClient, user: str, text: str) -> None:
    try:
        await client.chat_postMessage(channel=user, text=text)
    except SlackApiError as exc:
        _log.warning("could not message %s: %s", user, exc.response.get("error"))
