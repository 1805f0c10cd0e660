"""What a Teams activity says: the question (mentions and markup removed), where it was asked, by whom."""

from __future__ import annotations

import html
import re

from microsoft_agents.activity import Activity

from bot.core.answering import Question
from rag.types import Scope

PLATFORM = "teams"
PERSONAL, GROUP_CHAT, CHANNEL = "personal", "groupChat", "channel"
_AT = re.compile(r"<at[^>]*>(.*?)</at>", re.IGNORECASE | re.DOTALL)
_TAG = re.compile(r"<[^>]+>")


def question_text(activity: Activity) -> str:
    """The text without the markup Teams adds (other people's mentions keep their names)."""
    text = _AT.sub(r"\1", activity.text or "")
    text = _TAG.sub(" ", text.replace("<br>", "\n").replace("<br/>", "\n"))
    return " ".join(html.unescape(text).replace("\xa0", " ").split())


def kind(activity: Activity) -> str:
    """personal, groupChat or channel. Teams leaves the type out now and then: then a `19:…` thread (a channel
    or a group chat) counts as a group chat, anything else as a personal chat."""
    conversation = activity.conversation
    if conversation and conversation.conversation_type:
        return conversation.conversation_type
    return PERSONAL if is_personal_chat(conversation.id if conversation else "") else GROUP_CHAT


def addressed(activity: Activity) -> bool:
    """Whether the bot is asked: in a personal chat always; elsewhere when the message @mentions it (Teams
    delivers channel messages without a mention too when the app was granted that permission)."""
    if kind(activity) == PERSONAL:
        return True
    bot = activity.recipient.id if activity.recipient else None
    return any(m.mentioned is not None and m.mentioned.id == bot for m in activity.get_mentions())


def user_of(activity: Activity) -> str:
    """The asker's Entra object id (what AIE_TEAMS_ADMIN_IDS lists), else their Teams id."""
    sender = activity.from_property
    if sender is None:
        return ""
    return (sender.aad_object_id or sender.id or "").lower()


def user_ids(activity: Activity) -> tuple[str, ...]:
    """Every id an access list may name the asker by: the Entra object id (as sent and in lower case) and the
    Teams user id (29:…). Their Entra groups come from Microsoft Graph (bot/teams/groups.py) when it is on."""
    sender = activity.from_property
    if sender is None:
        return ()
    return tuple(dict.fromkeys(i for i in (user_of(activity), sender.aad_object_id, sender.id) if i))


def place_of(activity: Activity) -> str:
    """The conversation whose scope applies: in a channel the channel itself, not the reply chain
    (`19:…@thread.tacv2;messageid=…`) the conversation id names."""
    return place_in(activity.conversation.id)


def place_in(conversation_id: str) -> str:
    """The place a conversation id belongs to: a reply chain's channel, else the conversation itself."""
    return conversation_id.split(";", 1)[0]


def is_direct(activity: Activity) -> bool:
    """Whether only the sender reads the reply (a personal chat): access-listed documents may reach them."""
    conversation = activity.conversation
    return is_personal_chat(conversation.id if conversation else "",
                            conversation.conversation_type if conversation else None)


def is_personal_chat(conversation_id: str, conversation_type: str | None = None) -> bool:
    """A personal chat: as the type says, when Teams sends it; without it (or from the command line's
    --channel), any id but a `19:…` thread — channels and group chats, where everyone reads the reply."""
    if conversation_type:
        return conversation_type == PERSONAL
    return not conversation_id.startswith("19:")


def question_from(activity: Activity, text: str, history: list[tuple[str, str]], scope: Scope) -> Question:
    # In a channel the conversation id names the reply chain (…;messageid=…): its turns are the history.
    return Question(text=text, conversation=activity.conversation.id, user=user_of(activity), history=history,
                    event_id=activity.id or "", platform=PLATFORM, scope=scope)
