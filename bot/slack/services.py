"""What the Slack listeners need: the shared core, Slack's settings and its admin check."""

from __future__ import annotations

from dataclasses import dataclass, field

from bot.core.services import CoreServices
from bot.slack.admins import SlackAdmins
from bot.slack.config import SlackSettings


@dataclass(kw_only=True)
class SlackServices(CoreServices):
    settings: SlackSettings
    admins: SlackAdmins = field(default=None)  # type: ignore[assignment] - built from the settings when not given

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.admins is None:
            self.admins = SlackAdmins(self.settings.admins)
