"""The sources table for Teams admins, as an Adaptive Card: a bot's text-only messages render no Markdown
table in Teams, so each source is a container with its facts (rows from the core's `SourceRow`s)."""

from __future__ import annotations

from microsoft_agents.activity import Activity, ActivityTypes, Attachment

from bot.core.sources import SourceRow
from bot.teams.citations import CARD_FORMAT
from bot.teams.commands import inert

CARD_VERSION = "1.5"


def _facts(row: SourceRow) -> list[dict]:
    facts = [("Type", row.type), ("Collection", row.collection), ("Documents", str(row.documents)),
             ("Last sync", row.last_sync or "never"), ("Next run", row.upcoming)]
    if row.last_error:
        fix = f" (check `{row.error_variable}`)" if row.error_variable and row.error_variable not in row.last_error else ""
        facts.append(("Last error", f"{row.last_error}{fix} — {row.failures} failed in a row"))
    return [{"title": title, "value": inert(value)} for title, value in facts]


def sources_card(rows: list[SourceRow]) -> dict:
    """The card's JSON (the Adaptive Card schema's AdaptiveCard, Container, TextBlock and FactSet)."""
    body: list[dict] = [{"type": "TextBlock", "text": "Sources", "weight": "Bolder", "size": "Medium"}]
    for row in rows:
        body.append({"type": "Container", "separator": True, "items": [
            {"type": "TextBlock", "text": inert(row.name), "weight": "Bolder", "wrap": True,
             "color": "Attention" if row.last_error else "Default"},
            {"type": "FactSet", "facts": _facts(row)}]})
    body.append({"type": "TextBlock", "wrap": True, "isSubtle": True,
                 "text": "`reindex NAME` syncs one source now; `reindex` alone syncs all."})
    return {"type": "AdaptiveCard", "$schema": "http://adaptivecards.io/schemas/adaptive-card.json",
            "version": CARD_VERSION, "body": body}


def sources_message(rows: list[SourceRow]) -> Activity:
    """The reply to `sources`: the card, and a line of text for notifications and clients without cards."""
    failing = sum(1 for r in rows if r.last_error)
    summary = f"{len(rows)} source{'' if len(rows) == 1 else 's'}" + (f", {failing} failing" if failing else "")
    return Activity(type=ActivityTypes.message, text=summary,
                    attachments=[Attachment(content_type=CARD_FORMAT, content=sources_card(rows))])
