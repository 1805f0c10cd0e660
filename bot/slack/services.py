"""What the Slack listeners need: the core's facade, Slack's settings and its admin check."""

from __future__ import annotations

from dataclasses import dataclass

from bot.core.assistant import Assistant
from bot.slack.admins import SlackAdmins
from bot.slack.config import SlackSettings


@dataclass(kw_only=True)
class SlackServices:
    assistant: Assistant  # the composition root's, shared with the other surfaces
    settings: SlackSettings
    admins: SlackAdmins  # the composition root's, from the settings' AIE_ADMIN_USER_IDS
