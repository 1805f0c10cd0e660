"""Teams' feedback loop, of the custom kind: 👍/👎 on an answer make Teams ask for the form (a
`message/fetchTask` invoke), answered with a dialog whose Adaptive Card lists the answer's sources, each
with "Wrong source" / "This helped", and an optional comment. Sending it arrives as a
`message/submitAction` invoke: the 👍/👎 and the comment go on the whole answer, each source's choice is a
vote on that passage — the same store, thresholds, two-people rule and scope as Slack's. Teams always gets
its invoke response (without one it shows the user an error)."""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from microsoft_agents.activity import Activity, ActivityTypes, InvokeResponse
from microsoft_agents.hosting.core import TurnContext

from bot.core.assistant import Assistant
from bot.core.review import GONE, HELPED, VALUES, WRONG, SourceVoted
from bot.core.votes import RECORDED
from bot.teams.citations import CARD_FORMAT, cut
from bot.teams.conversation import PLATFORM, user_of

_log = logging.getLogger(__name__)
SUBMIT_ACTION = "message/submitAction"
FETCH_TASK = "message/fetchTask"
COMMENT = "feedbackText"  # the form's comment input: Teams' own name for the default form's text
_SOURCE = re.compile(r"source_(\d{1,3})")
LOCATION_LIMIT = 200

IsAdmin = Callable[[str], Awaitable[bool]]


@dataclass(frozen=True)
class Submitted:
    """What a feedback form sent: the 👍/👎, the comment, and marker -> +1 / -1 for each source judged."""

    helpful: bool
    comment: str | None = None
    sources: dict[int, int] = field(default_factory=dict)


def _form(action: dict) -> dict:
    """The form's inputs: Teams sends them as a JSON string (a plain string: the comment alone)."""
    feedback = action.get("feedback")
    if isinstance(feedback, str):
        try:
            feedback = json.loads(feedback)
        except ValueError:
            feedback = {COMMENT: feedback}
    return feedback if isinstance(feedback, dict) else {}


def _reaction(value: Any) -> dict | None:
    """The feedback action of an invoke's value; None when it is not one."""
    if not isinstance(value, dict) or value.get("actionName") != "feedback":
        return None
    action = value.get("actionValue")
    if not isinstance(action, dict) or action.get("reaction") not in ("like", "dislike"):
        return None
    return action


def parse(value: Any) -> Submitted | None:
    """The submission in a `message/submitAction` invoke's value; None when it is not a feedback one."""
    action = _reaction(value)
    if action is None:
        return None
    form = _form(action)
    comment = form.get(COMMENT)
    sources = {int(found.group(1)): VALUES[choice] for key, choice in form.items()
               if (found := _SOURCE.fullmatch(str(key))) and choice in VALUES}
    return Submitted(action["reaction"] == "like", comment if isinstance(comment, str) else None, sources)


def form_card(locations: list[str], helpful: bool) -> dict:
    """The feedback form: each source of the answer with its two choices, then the comment."""
    body: list[dict] = [{"type": "TextBlock", "weight": "Bolder", "wrap": True,
                         "text": "Thanks — what helped?" if helpful else "Sorry about that — what went wrong?"}]
    if locations:
        body.append({"type": "TextBlock", "wrap": True, "isSubtle": True,
                     "text": "Judge any of the sources (optional): a wrong source ranks lower for similar "
                             "questions once others agree."})
    for marker, location in enumerate(locations, 1):
        body += [{"type": "TextBlock", "text": f"[{marker}] {cut(location, LOCATION_LIMIT)}", "wrap": True},
                 {"type": "Input.ChoiceSet", "id": f"source_{marker}", "style": "expanded", "isMultiSelect": False,
                  "label": f"Source [{marker}]",
                  "choices": [{"title": "Wrong source", "value": WRONG}, {"title": "This helped", "value": HELPED}]}]
    body.append({"type": "Input.Text", "id": COMMENT, "isMultiline": True, "maxLength": 2000,
                 "label": "Anything to add? (optional)"})
    return {"type": "AdaptiveCard", "version": "1.5", "body": body,
            "actions": [{"type": "Action.Submit", "title": "Send"}]}


def _task(value: dict | str) -> dict:
    """A dialog response: a card to show (`continue`) or a short message."""
    if isinstance(value, str):
        return {"task": {"type": "message", "value": value}}
    return {"task": {"type": "continue", "value": {"title": "Feedback", "width": "medium", "height": "large",
                                                   "card": {"contentType": CARD_FORMAT, "content": value}}}}


async def _respond(context: TurnContext, status: int, body: dict | None = None) -> None:
    await context.send_activity(Activity(type=ActivityTypes.invoke_response,
                                         value=InvokeResponse(status=status, body=body)))


async def _answer_id(assistant: Assistant, activity: Activity) -> str | None:
    return await assistant.answer_of(activity.conversation.id, activity.reply_to_id or "")


async def on_fetch_task(assistant: Assistant, context: TurnContext) -> None:
    """The form for a 👍/👎 just pressed on an answer."""
    activity = context.activity
    action = _reaction(activity.value)
    if action is None:
        await _respond(context, 400)
        return
    locations = await assistant.cited_locations(await _answer_id(assistant, activity))
    if locations is None:
        _log.warning("feedback form for a message with no recorded answer (%s)", activity.reply_to_id)
        await _respond(context, 200, _task(GONE))
        return
    card = form_card(locations, action["reaction"] == "like")
    await _respond(context, 200, _task(card))


def confirmation(voted: dict[int, SourceVoted]) -> str:
    """What the sender reads once the form is sent."""
    lines = [f"✅ {RECORDED}"]
    lines += [f"[{marker}] {outcome.sentence()}" for marker, outcome in sorted(voted.items())]
    return "\n\n".join(lines)


async def on_submit_action(assistant: Assistant, context: TurnContext, is_admin: IsAdmin) -> None:
    activity = context.activity
    submitted = parse(activity.value)
    if submitted is None:
        _log.info("submitAction that is not feedback ignored")
        await _respond(context, 400)
        return
    user = user_of(activity)
    answer_id = await _answer_id(assistant, activity)
    new = None
    if answer_id is not None:
        new = await assistant.vote_on_answer(answer_id, user, submitted.helpful, activity.conversation.id, PLATFORM,
                                             submitted.comment)
    if new is None:
        _log.warning("feedback on a message with no recorded answer (%s)", activity.reply_to_id)
        await _respond(context, 200, _task(GONE) if submitted.sources else None)
        return
    if not submitted.sources:
        await _respond(context, 200)
        return
    admin = await is_admin(user)
    voted = {}
    for marker, value in submitted.sources.items():
        voted[marker] = await assistant.vote_on_source(answer_id, marker, user, value, admin, PLATFORM)
    await _respond(context, 200, _task(confirmation(voted)))
