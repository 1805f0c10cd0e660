"""Group memberships are kept for a while, and a lookup that fails shuts access-listed documents to all
but the people named on them, logged once, without anything secret."""

from __future__ import annotations

import asyncio
import logging

from bot.core.scopes import GroupDirectory, GroupLookupFailed


class Workspace:
    """Memberships as a platform would answer them, with a switch to make it fail."""

    def __init__(self) -> None:
        self.lookups = 0
        self.failure: Exception | None = None

    async def memberships(self):
        self.lookups += 1
        await asyncio.sleep(0.01)
        if self.failure is not None:
            raise self.failure
        return {"U1": frozenset({"S0LEADS"})}


def test_memberships_are_kept_for_the_ttl_and_shared_by_concurrent_questions():
    now = [0.0]
    workspace = Workspace()
    groups = GroupDirectory(workspace.memberships, ttl=300, clock=lambda: now[0])

    async def ask_many():
        return await asyncio.gather(*(groups.groups_of(user) for user in ("U1", "U2", "U1")))

    assert asyncio.run(ask_many()) == [{"S0LEADS"}, frozenset(), {"S0LEADS"}]
    assert workspace.lookups == 1
    now[0] = 299
    asyncio.run(groups.groups_of("U1"))
    assert workspace.lookups == 1
    now[0] = 301
    asyncio.run(groups.groups_of("U1"))
    assert workspace.lookups == 2


def test_a_failed_lookup_fails_closed_is_logged_once_and_recovers(caplog):
    now = [0.0]
    workspace = Workspace()
    groups = GroupDirectory(workspace.memberships, ttl=300, name="Slack user groups", clock=lambda: now[0])
    assert asyncio.run(groups.groups_of("U1")) == {"S0LEADS"}
    workspace.failure = GroupLookupFailed("missing_scope")
    caplog.set_level(logging.INFO, logger="bot.core.scopes.groups")
    for step in (301, 320, 400, 500):  # expired, within the retry pause, then asked again twice
        now[0] = step
        assert asyncio.run(groups.groups_of("U1")) == frozenset(), "no stale memberships after a failure"
    assert workspace.lookups == 4
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert warnings == ["could not look up Slack user groups (missing_scope): documents whose access list names "
                        "a group reach only the people named on them until it works again"]
    workspace.failure = ConnectionError("https://slack.example/api?token=xoxb-secret")
    now[0] = 600
    assert asyncio.run(groups.groups_of("U1")) == frozenset()
    assert "xoxb" not in caplog.text and "ConnectionError" not in caplog.text, "still failing: not logged again"
    workspace.failure = None
    now[0] = 700
    assert asyncio.run(groups.groups_of("U1")) == {"S0LEADS"}
    assert caplog.records[-1].getMessage() == "looking up Slack user groups works again"


def test_an_unexpected_error_is_named_by_its_kind_only(caplog):
    workspace = Workspace()
    workspace.failure = ConnectionError("https://slack.example/api?token=xoxb-secret")
    assert asyncio.run(GroupDirectory(workspace.memberships, name="groups").groups_of("U1")) == frozenset()
    assert "(ConnectionError)" in caplog.text and "xoxb" not in caplog.text
