"""Teams' feedback loop: 👍/👎 (with an optional comment) on an answer arrive as a `message/submitAction`
invoke. The vote goes to the shared feedback store; Teams always gets its invoke response (without one it
shows the user an error)."""

from __future__ import annotations

import json
import logging
from typing import Any

from microsoft_agents.activity import Activity, ActivityTypes, InvokeResponse
from microsoft_agents.hosting.core import TurnContext

from bot.core.services import CoreServices
from bot.core.votes import vote_on_answer
from bot.teams.conversation import user_of

_log = logging.getLogger(__name__)
SUBMIT_ACTION = "message/submitAction"


def parse(value: Any) -> tuple[bool, str | None] | None:
    """(helpful, comment) from the invoke's value; None when it is not a feedback submission."""
    if not isinstance(value, dict) or value.get("actionName") != "feedback":
        return None
    action = value.get("actionValue")
    if not isinstance(action, dict) or action.get("reaction") not in ("like", "dislike"):
        return None
    feedback = action.get("feedback")
    if isinstance(feedback, str):
        try:
            feedback = json.loads(feedback)
        except ValueError:
            feedback = {"feedbackText": feedback}
    comment = feedback.get("feedbackText") if isinstance(feedback, dict) else None
    return action["reaction"] == "like", comment if isinstance(comment, str) else None


async def on_submit_action(services: CoreServices, context: TurnContext) -> None:
    activity = context.activity
    submitted = parse(activity.value)
    status = 200
    if submitted is None:
        _log.info("submitAction that is not feedback ignored")
        status = 400
    else:
        helpful, comment = submitted
        answer_id = await services.memory.answer_of(activity.conversation.id, activity.reply_to_id or "")
        new = None
        if answer_id is not None:
            new = await vote_on_answer(services.feedback, answer_id, user_of(activity), helpful,
                                       activity.conversation.id, "teams", comment)
        if new is None:
            _log.warning("feedback on a message with no recorded answer (%s)", activity.reply_to_id)
    await context.send_activity(Activity(type=ActivityTypes.invoke_response, value=InvokeResponse(status=status)))
