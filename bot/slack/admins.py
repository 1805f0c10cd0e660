"""Slack's side of the admin check: workspace admins and owners count, as users.info says."""

from __future__ import annotations

import logging
from collections.abc import Collection

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.core.admins import AdminCheck
from bot.core.logs import described
from bot.core.sources import Teller
from bot.slack.blocks import SLACK_STYLE

_log = logging.getLogger(__name__)


async def workspace_admin(client: AsyncWebClient, user: str) -> bool | None:
    """Whether Slack says `user` is a workspace admin or owner; None when Slack could not tell."""
    try:
        info = (await client.users_info(user=user)).get("user", {})
    except SlackApiError as exc:
        _log.warning("users.info failed for %s: %s", user, exc.response.get("error"))
        return None
    return bool(info.get("is_admin") or info.get("is_owner") or info.get("is_primary_owner"))


class SlackAdmins:
    """AIE_ADMIN_USER_IDS, then workspace admins and owners."""

    def __init__(self, listed: Collection[str]) -> None:
        self.check = AdminCheck(listed)

    @property
    def listed(self) -> frozenset[str]:
        return self.check.listed

    async def is_admin(self, client: AsyncWebClient, user: str) -> bool:
        return await self.check.is_admin(user, lambda u: workspace_admin(client, u))


def admin_teller(client: AsyncWebClient) -> Teller:
    """Tells an admin something privately: a message in their direct conversation with the app."""

    async def send(user: str, text: str) -> bool:
        try:
            await client.chat_postMessage(channel=user, text=text)
            return True
        except SlackApiError as exc:
            _log.warning("could not message %s: %s", user, exc.response.get("error"))
        except Exception as exc:  # noqa: BLE001 - e.g. Slack unreachable: told on a later failure
            _log.warning("could not message %s: %s", user, described(exc))
        return False

    return Teller(SLACK_STYLE, send)
