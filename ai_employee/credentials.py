"""`serve`'s start-up check of each configured surface's credentials (one call to its platform, at once for
both), and what may then be served: every surface whose credentials were not refused."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from bot.core.credentials import OK, RECHECK_SECONDS, Check, Credentials, CredentialStatus
from bot.teams.config import PREFIX

if TYPE_CHECKING:
    from microsoft_agents.hosting.core.authorization import Connections

    from bot.slack.config import SlackSettings
    from bot.teams.config import TeamsSettings

NAMES = {"slack": "Slack", "teams": "Teams"}
FIX = {"slack": "check SLACK_BOT_TOKEN (the xoxb-… Bot User OAuth Token)",
       "teams": f"check {PREFIX}CLIENTID, CLIENTSECRET and TENANTID (the Azure Bot's app registration)"}


def checks(slack: SlackSettings | None, teams: TeamsSettings | None, connections: Connections | None) -> dict[str, Check]:
    """The check of each configured surface; Teams' anonymous mode has no credentials to check."""
    found: dict[str, Check] = {}
    if slack is not None and slack.slack_bot_token is not None:
        from bot.slack.credentials import check_bot_token

        token, api_url = slack.slack_bot_token.get_secret_value(), slack.api_url
        found["slack"] = lambda: check_bot_token(token, api_url)
    if teams is not None:
        if teams.client_id and connections is not None:
            from bot.teams.credentials import check_registration

            found["teams"] = lambda: check_registration(connections)
        else:
            found["teams"] = _anonymous
    return found


async def _anonymous() -> Credentials:
    return OK


async def _run(surfaces: dict[str, Check]) -> dict[str, Credentials]:
    return dict(zip(surfaces, await asyncio.gather(*(check() for check in surfaces.values()))))


def verify(surfaces: dict[str, Check]) -> CredentialStatus:
    """Every surface checked (blocking, a few seconds at most); only those not refused are checked again."""
    loop = asyncio.new_event_loop()  # not asyncio.run: it would wait for an MSAL thread stalled past the timeout
    try:
        results = loop.run_until_complete(_run(surfaces))
    finally:
        loop.close()
    served = {s: check for s, check in surfaces.items() if results[s].state != "invalid"}
    return CredentialStatus(results, served)


def refused(status: CredentialStatus) -> dict[str, Credentials]:
    return {surface: result for surface, result in status.results.items() if result.state == "invalid"}


def nothing_to_serve(status: CredentialStatus) -> str:
    """The one line `serve` stops with when every configured surface's credentials were refused."""
    return "cannot start: " + "; ".join(f"{NAMES[s]}: {r.shown}, {FIX[s]}" for s, r in refused(status).items())


def warnings(status: CredentialStatus) -> list[str]:
    """One line per surface that is not fully working: refused (not served) or unverified (served)."""
    served = [NAMES[s] for s, r in status.results.items() if r.state != "invalid"]
    lines = []
    for surface, result in status.results.items():
        name = NAMES[surface]
        if result.state == "invalid":
            lines.append(f"{name} is not served: {result.shown}; {FIX[surface]}. Serving {' and '.join(served)} "
                         f"only; /ready answers 503 until this is fixed or the {name} settings are removed")
        elif result.state == "unverified":
            lines.append(f"could not verify the {name} credentials: {result.shown}; serving {name} anyway, "
                         f"/ready answers 503 until {name} accepts them (checked again every {RECHECK_SECONDS:.0f} s)")
    return lines
