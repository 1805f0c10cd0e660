"""Slack user groups and their members (`usergroups.list` with `include_users`; scope usergroups:read),
for documents whose access list names a group (S…)."""

from __future__ import annotations

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.core.scopes.groups import GroupLookupFailed, Memberships


async def user_groups(client: AsyncWebClient) -> Memberships:
    """Each member's groups (disabled groups left out). Raises GroupLookupFailed with Slack's error code."""
    try:
        response = await client.usergroups_list(include_users=True)
    except SlackApiError as exc:
        raise GroupLookupFailed(str(exc.response.get("error") or "error")) from None
    members: dict[str, set[str]] = {}
    for group in response.get("usergroups") or []:
        if group.get("date_delete"):  # disabled, though Slack lists only enabled groups unless asked
            continue
        for user in group.get("users") or []:
            members.setdefault(user, set()).add(group["id"])
    return {user: frozenset(groups) for user, groups in members.items()}
