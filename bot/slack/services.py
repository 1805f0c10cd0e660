"""What the Slack listeners need: the shared core, Slack's settings and its admin check."""

from __future__ import annotations

from dataclasses import dataclass

from bot.core.services import CoreServices
from bot.slack.admins import SlackAdmins
from bot.slack.config import SlackSettings


@dataclass(kw_only=True)
class SlackServices(CoreServices):
    settings: SlackSettings
    admins: SlackAdmins  # the composition root's, from the settings' AIE_ADMIN_USER_IDS
