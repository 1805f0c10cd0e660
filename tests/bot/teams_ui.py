"""What Teams sends the bot, as Teams sends it: activities POSTed to /api/messages whose `serviceUrl` is
the local Bot Connector; and the bot on real HTTP with Teams in the SDK's anonymous local mode."""

from __future__ import annotations

import asyncio
import itertools
import json
from typing import Any

import httpx

from bot.teams.config import TeamsSettings
from tests.bot.harness import RunningBot, start_bot
from tests.fakes.bot_connector import BotConnector

BOT_ID = "28:bot-app-id"
BOT_NAME = "AI Employee"
ADMIN = "aad0000a-0000-4000-8000-000000000001"
MEMBER = "aad0000b-0000-4000-8000-000000000002"
TENANT = "tenant-0000-4000-8000-000000000000"
_ids = itertools.count(1)


def activity(connector: BotConnector, text: str, *, conversation: str = "a:personal-chat-1",
             kind: str = "personal", user: str = MEMBER, activity_id: str | None = None,
             mention: bool = False, **extra: Any) -> dict[str, Any]:
    """A message from a Teams user; `mention` prefixes the bot's @mention, as Teams writes it."""
    entities = []
    if mention:
        at = f"<at>{BOT_NAME}</at>"
        text = f"{at} {text}"
        entities.append({"type": "mention", "text": at, "mentioned": {"id": BOT_ID, "name": BOT_NAME}})
    body = {
        "type": "message", "id": activity_id or f"msg-{next(_ids)}", "channelId": "msteams",
        "serviceUrl": connector.service_url, "timestamp": "2026-11-30T10:00:00.000Z", "text": text,
        "textFormat": "plain", "locale": "en-US",
        "from": {"id": f"29:{user}", "name": "Pat Member", "aadObjectId": user},
        "recipient": {"id": BOT_ID, "name": BOT_NAME},
        "conversation": {"id": conversation, "conversationType": kind, "tenantId": TENANT},
        "channelData": {"tenant": {"id": TENANT}}, "entities": entities,
    }
    return {**body, **extra}


def post(bot: RunningBot, body: dict | bytes, headers: dict[str, str] | None = None) -> httpx.Response:
    content = body if isinstance(body, bytes) else httpx.Request("POST", "/", json=body).content
    return httpx.post(f"{bot.url}/api/messages", content=content,
                      headers={"Content-Type": "application/json", **(headers or {})}, timeout=30)


def feedback(connector: BotConnector, message_id: str, reaction: str, comment: str | None = None,
             conversation: str = "a:personal-chat-1", user: str = MEMBER) -> dict[str, Any]:
    """The invoke Teams sends when someone presses 👍/👎 on a message (and optionally writes why)."""
    base = activity(connector, "", conversation=conversation, user=user)
    base.pop("text")
    action = {"reaction": reaction, "feedback": json.dumps({"feedbackText": comment or ""})}
    return {**base, "type": "invoke", "name": "message/submitAction", "replyToId": message_id,
            "value": {"actionName": "feedback", "actionValue": action}}


def start_teams_bot(handbook_index, tmp_path, *, anonymous: bool = True, connections=None, **settings) -> RunningBot:
    data_dir, index_dir = handbook_index
    registration = {} if anonymous else {"client_id": "bot-app-id", "client_secret": "s", "tenant_id": TENANT}
    teams = TeamsSettings(_env_file=None, anonymous_allowed=anonymous, admin_ids=ADMIN, **registration)
    return start_bot(data_dir, index_dir, None, teams=teams, teams_connections=connections,
                     **{"gate_threshold": 0.85, "feedback_db": tmp_path / "feedback.sqlite3",
                        "chat_settings": {"AIE_SCOPES_DB": str(tmp_path / "scopes.sqlite3")}, **settings})


def answer_of(bot: RunningBot, conversation: str, message_id: str):
    """The recorded answer a bot message in Teams shows (as the feedback loop finds it), or None."""
    memory = bot.services.memory
    answer_id = asyncio.run_coroutine_threadsafe(memory.answer_of(conversation, message_id), bot._loop).result(10)
    return bot.services.feedback.answer(answer_id) if answer_id else None


def feedback_form(connector: BotConnector, message_id: str, reaction: str, conversation: str = "a:personal-chat-1",
                  user: str = MEMBER) -> dict[str, Any]:
    """The invoke Teams sends for a message with a custom feedback loop when 👍/👎 is pressed: it asks the bot
    for the form to show."""
    base = feedback(connector, message_id, reaction, conversation=conversation, user=user)
    base["value"]["actionValue"].pop("feedback")
    return {**base, "name": "message/fetchTask"}


def form_sent(connector: BotConnector, message_id: str, reaction: str, inputs: dict[str, str],
              conversation: str = "a:personal-chat-1", user: str = MEMBER) -> dict[str, Any]:
    """The invoke Teams sends when the custom feedback form is sent: its inputs as a JSON string."""
    base = feedback(connector, message_id, reaction, conversation=conversation, user=user)
    base["value"]["actionValue"]["feedback"] = json.dumps(inputs)
    return base


def card_action(connector: BotConnector, verb: str, data: dict[str, Any], conversation: str = "a:admin-chat",
                user: str = ADMIN, message_id: str = "card-1") -> dict[str, Any]:
    """The invoke Teams sends when an Action.Execute button of a card is pressed."""
    base = activity(connector, "", conversation=conversation, user=user)
    base.pop("text")
    return {**base, "type": "invoke", "name": "adaptiveCard/action", "replyToId": message_id,
            "value": {"action": {"type": "Action.Execute", "verb": verb, "data": data}, "trigger": "manual"}}


def _nodes(node: Any):
    """Every object of a card's JSON, depth first."""
    if isinstance(node, dict):
        yield node
        for value in node.values():
            yield from _nodes(value)
    elif isinstance(node, list):
        for item in node:
            yield from _nodes(item)


def card_text(card: dict[str, Any]) -> str:
    """Every text of an Adaptive Card's body, as the reader sees it, one per line."""
    return "\n".join(n.get("text", "") for n in _nodes(card.get("body", [])) if n.get("type") == "TextBlock")


def card_actions(card: dict[str, Any]) -> list[tuple[str, str | None, dict | None]]:
    """(title, verb, data) of every action of an Adaptive Card, in order."""
    return [(n.get("title", ""), n.get("verb"), n.get("data")) for n in _nodes(card)
            if str(n.get("type", "")).startswith("Action.")]
