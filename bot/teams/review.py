"""The admins' review in Teams: `review` in the personal chat answers with an Adaptive Card of the flagged
passages and the down-voted answers of the last days — of the documents the admin's own scope may read,
the others only counted, as Slack's Home tab — with "Confirm demotion", "Undo" and "Show passage" per
passage. Those are `Action.Execute` buttons: Teams sends an `adaptiveCard/action` invoke and shows the
card the bot answers with in place of the old one. Every action checks again that the sender is an admin
in a personal chat."""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable
from typing import Any

from microsoft_agents.activity import Activity, ActivityTypes, AdaptiveCardInvokeResponse, Attachment
from microsoft_agents.hosting.core import TurnContext

from bot.core.assistant import Assistant
from bot.core.review import (
    NOT_IN_REVIEW,
    STATUS,
    WORDS,
    Review,
    VerdictGiven,
    VotedPassage,
    outside,
    rules_note,
)
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
# A Teams message holds 40 KB (UTF-16): the lists get what is left once the rest of the card is in.
ANSWERS_BUDGET, PASSAGES_BUDGET, SHOWN_CHARS = 12_000, 16_000, 1500
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


def _size(block: dict) -> int:
    """What a block weighs in a Teams message, whose limit counts UTF-16 bytes."""
    return len(json.dumps(block, ensure_ascii=False).encode("utf-16-le"))


def _fitting(blocks: list[dict], budget: int, keep: dict | None = None) -> list[dict]:
    """The first blocks that fit in `budget`, in order; `keep` (the passage opened) always."""
    kept, used, full = [], _size(keep) if keep is not None else 0, False
    for block in blocks:
        if block is keep:
            kept.append(block)
        elif not full and used + _size(block) <= budget:
            kept.append(block)
            used += _size(block)
        else:
            full = True
    return kept


def _more(left: int, many: str) -> list[dict]:
    return [_text(f"… and {left} more {many} (`ai-employee feedback summary --limit N` lists more).",
                  isSubtle=True)] if left > 0 else []


def _answer(entry: dict) -> dict:
    lines = [f"**“{_plain(entry['question'], 300)}”**", f"👎 {entry['down_votes']} · 👍 {entry['up_votes']}"]
    reasons = entry.get("reasons") or {}
    if reasons:
        lines.append("Reasons: " + " · ".join(f"{r} ×{n}" for r, n in sorted(reasons.items(), key=lambda i: -i[1])))
    lines += [f"> {_plain(comment, 300)}" for comment in (entry.get("comments") or [])[:2]]
    lines.append(f"_Answer:_ {_plain(entry['answer'], 300)}")
    return {"type": "Container", "separator": True, "items": [_text("\n\n".join(lines))]}


def _answers(review: Review) -> list[dict]:
    answers = review.items.get("answers", [])
    blocks = [_text(WORDS.answers, size="Medium", weight="Bolder")]
    if not answers:
        blocks.append(_text(f"👎 {WORDS.no_answers}", isSubtle=True))
    listed = _fitting([_answer(e) for e in answers[:MAX_ANSWERS]], ANSWERS_BUDGET)
    blocks += listed + _more(len(answers) - len(listed), "down-voted answers")
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
        items += [_text(_plain(shown.cited.text, SHOWN_CHARS)), _text(f"**Voted on for these questions:**\n{asked}")]
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
    entries = [_passage(e, shown[1] if shown and shown[0] == e["chunk_id"] else None) for e in passages[:MAX_PASSAGES]]
    opened = next((b for b, e in zip(entries, passages) if shown and shown[0] == e["chunk_id"]), None)
    listed = _fitting(entries, PASSAGES_BUDGET, keep=opened)
    blocks += listed + _more(len(passages) - len(listed), "flagged passages")
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


def notice_of(done: VerdictGiven) -> str:
    return f"{'↩️' if done.action == 'undo' else '✅'} {done.sentence(lambda text: f'**{inert(text)}**')}"


class TeamsReview:
    """The `review` command and its card's actions, for the Teams surface."""

    def __init__(self, assistant: Assistant, is_admin: Callable[[str], Awaitable[bool]],
                 scope: Callable[[Activity], Awaitable[Scope]]) -> None:
        self.assistant = assistant
        self.is_admin = is_admin
        self.scope = scope  # what may be shown where an activity was sent (the personal chat: its sender)

    async def _refusal(self, activity: Activity) -> str | None:
        if not await self.is_admin(user_of(activity)):
            return NOT_ADMIN
        return None if is_direct(activity) else NOT_HERE

    async def card(self, activity: Activity, notice: str | None = None, show: str | None = None) -> dict:
        scope = await self.scope(activity)
        passage = await self.assistant.passage_for_admin(show, scope) if show else None
        review = await self.assistant.review(scope)
        return review_card(review, notice, (show, passage) if passage else None)

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
        done = await self.assistant.give_verdict(chunk_id, action, user_of(activity), scope)
        return _card_response(await self.card(activity, notice_of(done) if done else NOT_IN_REVIEW))


def _card_response(card: dict) -> AdaptiveCardInvokeResponse:
    return AdaptiveCardInvokeResponse(status_code=200, type=CARD_FORMAT, value=card)
