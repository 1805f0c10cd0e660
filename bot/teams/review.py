"""The admins' review in Teams: `review` in the personal chat answers with an Adaptive Card of the flagged
passages and the down-voted answers of the last days — of the documents the admin's own scope may read,
the others only counted, as Slack's Home tab — with "Confirm demotion", "Undo" and "Show passage" per
passage. Those are `Action.Execute` buttons: Teams sends an `adaptiveCard/action` invoke and shows the
card the bot answers with in place of the old one. Every action checks again that the sender is an admin
in a personal chat."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable
from typing import Any

from microsoft_agents.activity import Activity, ActivityTypes, AdaptiveCardInvokeResponse, Attachment
from microsoft_agents.hosting.core import TurnContext

from bot.core.review import (
    NOT_IN_REVIEW,
    STATUS,
    WORDS,
    Overridden,
    Review,
    VotedPassage,
    admin_review,
    outside,
    override,
    passage_for_admin,
    rules_note,
)
from bot.core.services import CoreServices
from bot.teams.citations import CARD_FORMAT, cut
from bot.teams.commands import inert
from bot.teams.command_names import REVIEW_COMMAND
from bot.teams.conversation import is_direct, user_of
from bot.teams.reply import delivering
from rag.types import Scope

REVIEW = re.compile(rf"^\s*{REVIEW_COMMAND}\s*$", re.IGNORECASE)
CONFIRM, UNDO, SHOW = "review/confirm", "review/undo", "review/show"
VERBS = re.compile(r"^review/")
MAX_ANSWERS, MAX_PASSAGES, MAX_DOCUMENTS, MAX_PEOPLE, MAX_QUESTIONS = 10, 15, 10, 10, 5
NOT_ADMIN = "Sorry, only knowledge-base admins can use `review`."
NOT_HERE = "The review is only shown in our personal chat: send me `review` there."


def _plain(text: str, limit: int) -> str:
    """Documents' and users' words as written: no link, no markup of theirs."""
    return inert(cut(text, limit))


def _text(text: str, **style: Any) -> dict:
    return {"type": "TextBlock", "text": text, "wrap": True, **style}


def _people(users: list[str]) -> str:
    shown = ", ".join(f"`{u}`" for u in users[:MAX_PEOPLE])
    return shown + (f" and {len(users) - MAX_PEOPLE} more" if len(users) > MAX_PEOPLE else "")


def _outside(hidden: int, one: str, many: str) -> list[dict]:
    if not hidden:
        return []
    return [_text(f"🔒 {outside(hidden, one, many, 'in our personal chat')}", isSubtle=True)]


def _answers(review: Review) -> list[dict]:
    answers = review.items.get("answers", [])
    blocks = [_text(WORDS.answers, size="Medium", weight="Bolder")]
    if not answers:
        blocks.append(_text(f"👎 {WORDS.no_answers}", isSubtle=True))
    for entry in answers[:MAX_ANSWERS]:
        lines = [f"**“{_plain(entry['question'], 300)}”**", f"👎 {entry['down_votes']} · 👍 {entry['up_votes']}"]
        reasons = entry.get("reasons") or {}
        if reasons:
            lines.append("Reasons: " + " · ".join(f"{r} ×{n}" for r, n in sorted(reasons.items(), key=lambda i: -i[1])))
        lines += [f"> {_plain(comment, 400)}" for comment in (entry.get("comments") or [])[:3]]
        lines.append(f"_Answer:_ {_plain(entry['answer'], 300)}")
        blocks.append({"type": "Container", "separator": True, "items": [_text("\n\n".join(lines))]})
    if len(answers) > MAX_ANSWERS:
        blocks.append(_text(f"… and {len(answers) - MAX_ANSWERS} more down-voted answers.", isSubtle=True))
    return blocks + _outside(review.hidden.get("answers", 0), "down-voted answer", "down-voted answers")


def _button(title: str, verb: str, chunk_id: str) -> dict:
    return {"type": "Action.Execute", "title": title, "verb": verb, "data": {"chunk": chunk_id}}


def _passage(entry: dict, shown: VotedPassage | None) -> dict:
    status = entry["status"]
    flagged = f"🚩 Flagged by {_people(entry['flaggers'])}"
    if entry.get("helpers"):
        flagged += f" · 👍 found helpful by {_people(entry['helpers'])}"
    items = [_text(f"**{inert(entry['location'])}** · `{entry['file']}`"),
             _text(f"> {_plain(entry.get('text') or '', 280)}") if entry.get("text") else None,
             _text(flagged),
             _text(f"Status: **{status}**{' (admin)' if entry.get('admin') else ''} — {STATUS.get(status, '')}")]
    if shown is not None:
        asked = "\n".join(f"- {_plain(q, 300)}" for q in shown.questions[:MAX_QUESTIONS])
        items += [_text(inert(shown.cited.text)), _text(f"**Voted on for these questions:**\n{asked}")]
    buttons = []
    if status != "passage changed" and not (status == "demoted" and entry.get("admin")):
        buttons.append(_button("Confirm demotion", CONFIRM, entry["chunk_id"]))
    buttons += [_button("Undo", UNDO, entry["chunk_id"]), _button("Show passage", SHOW, entry["chunk_id"])]
    items.append({"type": "ActionSet", "actions": buttons})
    return {"type": "Container", "separator": True, "items": [i for i in items if i]}


def _passages(review: Review, shown: tuple[str, VotedPassage] | None) -> list[dict]:
    passages = review.items.get("passages", [])
    blocks = [_text(WORDS.passages, size="Medium", weight="Bolder")]
    if not passages:
        blocks.append(_text(f"🚩 {WORDS.no_passages}", isSubtle=True))
    for entry in passages[:MAX_PASSAGES]:
        blocks.append(_passage(entry, shown[1] if shown and shown[0] == entry["chunk_id"] else None))
    if len(passages) > MAX_PASSAGES:
        blocks.append(_text(f"… and {len(passages) - MAX_PASSAGES} more flagged passages.", isSubtle=True))
    return blocks + _outside(review.hidden.get("passages", 0), "flagged passage", "flagged passages")


def review_card(review: Review, notice: str | None = None, shown: tuple[str, VotedPassage] | None = None) -> dict:
    """The review as an Adaptive Card; `shown`: a passage opened in full (its chunk id and what it says)."""
    body = [_text("Knowledge base — review", size="Large", weight="Bolder")]
    if notice:
        body.append(_text(notice))
    body += _answers(review) + _passages(review, shown)
    documents = review.items.get("documents", [])
    if documents:
        listed = " · ".join(f"`{d['file']}` ({d['flags']})" for d in documents[:MAX_DOCUMENTS])
        if review.hidden.get("documents"):
            listed += f" · and {review.hidden['documents']} more outside your scope"
        body.append(_text(f"**{WORDS.most_flagged}** {listed}"))
    body.append(_text(rules_note(review.min_voters, bold="**"), isSubtle=True, size="Small"))
    return {"type": "AdaptiveCard", "version": "1.5", "body": body}


def notice_of(done: Overridden) -> str:
    return f"{'↩️' if done.action == 'undo' else '✅'} {done.sentence(lambda text: f'**{inert(text)}**')}"


class TeamsReview:
    """The `review` command and its card's actions, for the Teams surface."""

    def __init__(self, services: CoreServices, is_admin: Callable[[str], Awaitable[bool]],
                 scope: Callable[[Activity], Awaitable[Scope]]) -> None:
        self.services = services
        self.is_admin = is_admin
        self.scope = scope  # what may be shown where an activity was sent (the personal chat: its sender)

    async def _refusal(self, activity: Activity) -> str | None:
        if not await self.is_admin(user_of(activity)):
            return NOT_ADMIN
        return None if is_direct(activity) else NOT_HERE

    async def card(self, activity: Activity, notice: str | None = None, show: str | None = None) -> dict:
        scope = await self.scope(activity)

        def gather() -> tuple[Review, tuple[str, VotedPassage] | None]:
            passage = passage_for_admin(self.services, show, scope) if show else None
            return admin_review(self.services, scope), ((show, passage) if passage else None)

        review, shown = await asyncio.to_thread(gather)
        return review_card(review, notice, shown)

    async def on_command(self, context: TurnContext) -> None:
        refused = await self._refusal(context.activity)
        if refused:
            await context.send_activity(refused)
            return
        card = await self.card(context.activity)
        async with delivering():
            await context.send_activity(Activity(type=ActivityTypes.message, attachments=[
                Attachment(content_type=CARD_FORMAT, content=card)]))

    async def on_action(self, context: TurnContext, data: Any) -> AdaptiveCardInvokeResponse:
        """Confirm, undo or show, then the card to show in place of the pressed one."""
        activity = context.activity
        verb = activity.value.get("action", {}).get("verb") if isinstance(activity.value, dict) else None
        chunk_id = data.get("chunk") if isinstance(data, dict) else None
        refused = await self._refusal(activity)
        if refused or not isinstance(chunk_id, str) or verb not in (CONFIRM, UNDO, SHOW):
            card = {"type": "AdaptiveCard", "version": "1.5", "body": [_text(refused or "Nothing to do.")]}
            return _card_response(card)
        if verb == SHOW:
            return _card_response(await self.card(activity, show=chunk_id))
        action, scope = "confirm" if verb == CONFIRM else "undo", await self.scope(activity)
        done = await asyncio.to_thread(override, self.services, chunk_id, action, user_of(activity), scope)
        return _card_response(await self.card(activity, notice_of(done) if done else NOT_IN_REVIEW))


def _card_response(card: dict) -> AdaptiveCardInvokeResponse:
    return AdaptiveCardInvokeResponse(status_code=200, type=CARD_FORMAT, value=card)
