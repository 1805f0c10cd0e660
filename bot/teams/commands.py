"""Bot commands (Teams bots have no slash commands). `reindex`: for admins listed in AIE_TEAMS_ADMIN_IDS it
runs the same reindex as Slack's /reindex — one at a time across both — with one progress message updated
in place and the report at the end (with declared sources, `reindex handbook [allow-mass-delete]` syncs
those); anyone else is politely refused. `sources`: the declared sources' table, for those admins. `scope`: the conversation's
collections, shown to anyone and changed by those admins (`scope hr,public`, `scope reset`)."""

from __future__ import annotations

import re

from microsoft_agents.activity import Activity, ActivityTypes
from microsoft_agents.hosting.core import TurnContext

from bot.core.links import without_links
from bot.core.reindex import TextStyle, not_admin
from bot.core.scopes.command import ScopeStyle
from bot.teams.command_names import COMMAND, SCOPE_COMMAND, SOURCES_COMMAND
from bot.teams.reply import delivering

_CODE = re.compile(r"(`[^`\n]*`)")


def inert(text: str) -> str:
    """Text Teams renders as written: outside inline code no link (Markdown, autolink) and no HTML tag."""
    return "".join(part if _CODE.fullmatch(part) else without_links(part).replace("<", "‹").replace(">", "›")
                   for part in _CODE.split(text))


TEAMS_STYLE = TextStyle(working="⏳", done="✅", failed="❌", bold="**", italic="_", escape=inert, command=COMMAND)
REINDEX = re.compile(rf"\s*{COMMAND}\s*", re.IGNORECASE)
# With declared sources: `reindex handbook runbooks allow-mass-delete` (source names: letters, digits, - and _).
REINDEX_SOURCES = re.compile(rf"\s*{COMMAND}(?:\s+[\w-]+)*\s*", re.IGNORECASE)
SOURCES = re.compile(rf"\s*{SOURCES_COMMAND}\s*", re.IGNORECASE)
# `scope`, `scope reset`, `scope hr` or a comma list (`scope hr, human resources`): a question that merely
# starts with the word ("scope of the travel policy?", "scope?") is answered as a question.
SCOPE = re.compile(r"\s*scope(?:\s+(?P<argument>[^,\s?？]+|[^,?？]+(?:,[^,?？]*)+))?\s*", re.IGNORECASE | re.DOTALL)
# The reply is posted in the conversation: in a channel everyone there reads it.
SCOPE_STYLE = ScopeStyle(command=SCOPE_COMMAND, bold="**", person=lambda user: f"`{user}`", private_reply=False)
NOT_ADMIN = not_admin("`reindex`")
NOT_ADMIN_SOURCES = "Sorry, only knowledge-base admins can see the sources' syncs."
PERSONAL_ONLY = "The sources table is for admins' eyes: send me `sources` in our personal chat."
UNKNOWN_ELSEWHERE = ("There is no source of that name. Send me `sources` in our personal chat to see the "
                     "sources.")


def sync_words(text: str) -> str:
    """What follows `reindex` in a reindex command."""
    return text.strip()[len(COMMAND):]


class ProgressMessage:
    """The reindex's one message in the conversation: sent first, then updated in place."""

    def __init__(self, context: TurnContext) -> None:
        self.context = context
        self.message_id: str | None = None

    async def show(self, text: str) -> None:
        async with delivering():
            if self.message_id is None:
                sent = await self.context.send_activity(text)
                self.message_id = sent.id if sent else None
                return
            await self.context.update_activity(Activity(type=ActivityTypes.message, id=self.message_id, text=text))


def scope_argument(text: str) -> str:
    """What follows `scope` in a scope command ("" when nothing does)."""
    found = SCOPE.fullmatch(text)
    return (found.group("argument") or "") if found else ""
