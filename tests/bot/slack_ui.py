"""What a person does in Slack, as the payloads Slack sends the bot: ask, vote, open modals, submit them,
open the Home tab and press its buttons. Views come from the local Slack API server as it keeps them."""

from __future__ import annotations

import httpx

from tests.bot.harness import BOT_USER, TEAM, RunningBot, wait_for
from tests.fakes.slack_api import SlackApiServer

CHANNEL = "C0GENERAL"


def unescape(text: str) -> str:
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


def view_text(view: dict) -> str:
    """Every text a person reads in a view (headers, sections, context, input labels and options, buttons)."""
    out: list[str] = []

    def text_of(obj) -> None:
        if isinstance(obj, dict) and isinstance(obj.get("text"), str):
            out.append(obj["text"])

    for block in view.get("blocks", []):
        text_of(block.get("text"))
        text_of(block.get("label"))
        for element in block.get("elements", []):
            text_of(element)
            text_of(element.get("text"))
        element = block.get("element") or block.get("accessory") or {}
        text_of(element.get("text"))
        for option in element.get("options", []):
            text_of(option.get("text"))
    return unescape("\n".join(out))


def buttons(view: dict) -> list[dict]:
    found = [e for b in view.get("blocks", []) if b["type"] == "actions" for e in b["elements"]]
    return found + [b["accessory"] for b in view.get("blocks", []) if b.get("accessory", {}).get("type") == "button"]


def ask(bot: RunningBot, slack: SlackApiServer, question: str, user: str = "U0PLAIN01") -> tuple[dict, str]:
    """Mention the bot; the finished answer message (chat.update args) and its recorded answer id."""
    before = len(slack.calls_to("chat.update"))
    ts = slack.seed_message(CHANNEL, f"<@{BOT_USER}> {question}", user=user)
    bot.event({"type": "app_mention", "user": user, "text": f"<@{BOT_USER}> {question}", "ts": ts,
               "channel": CHANNEL, "event_ts": ts, "team": TEAM})
    final = wait_for(lambda: [c for c in slack.calls_to("chat.update")[before:]
                              if c.args.get("ts") and any(b.get("type") == "context_actions"
                                                          for b in c.args.get("blocks") or [])])[0]
    feedback = next(b for b in final.args["blocks"] if b["type"] == "context_actions")["elements"][0]
    return final.args, feedback["negative_button"]["value"].split(":", 1)[1]


def _click(bot: RunningBot, user: str, action_id: str, value: str, trigger_id: str, **where) -> httpx.Response:
    payload = {"type": "block_actions", "user": {"id": user}, "team": {"id": TEAM}, "api_app_id": "A0FAKEAPP",
               "trigger_id": trigger_id, **where,
               "actions": [{"action_id": action_id, "block_id": "b", "type": "button", "value": value,
                            "action_ts": "1"}]}
    response = bot.interaction(payload)
    assert response.status_code == 200
    return response


def thumbs(bot: RunningBot, message: dict, answer_id: str, user: str, up: bool, trigger_id: str) -> None:
    _click(bot, user, "answer_feedback", f"{'up' if up else 'down'}:{answer_id}", trigger_id,
           channel={"id": CHANNEL}, container={"type": "message", "channel_id": CHANNEL},
           message={"ts": message["ts"], "thread_ts": message["ts"]})


def open_source(bot: RunningBot, slack: SlackApiServer, message: dict, marker: int, user: str) -> dict:
    """Press "Show source" on footnote [marker]; the modal Slack opened (with its id and hash)."""
    button = next(b["accessory"] for b in message["blocks"]
                  if b.get("accessory", {}).get("action_id") == "show_source"
                  and b["accessory"]["value"].endswith(f":{marker}"))
    before = len(slack.calls_to("views.open"))
    _click(bot, user, "show_source", button["value"], f"trigger-source-{before}",
           channel={"id": CHANNEL}, container={"type": "message"}, message={"ts": message["ts"]})
    return wait_for(lambda: slack.calls_to("views.open")[before:])[0].response["view"]


def press_in_view(bot: RunningBot, view: dict, user: str, action_id: str, value: str | None = None,
                  trigger_id: str = "trigger-view") -> httpx.Response:
    """Press a button of a modal or Home tab (by action id; the value is the button's unless given)."""
    if value is None:
        value = next(b["value"] for b in buttons(view) if b["action_id"] == action_id)
    return _click(bot, user, action_id, value, trigger_id, container={"type": "view", "view_id": view["id"]},
                  view=view)


def vote_on_source(bot: RunningBot, slack: SlackApiServer, message: dict, marker: int, user: str,
                   helped: bool) -> str:
    """Open footnote [marker]'s source and press "This source helped" / "is wrong"; what the modal then says."""
    view = open_source(bot, slack, message, marker, user)
    before = len(slack.calls_to("views.update"))
    press_in_view(bot, view, user, "helpful_source" if helped else "wrong_source")
    update = wait_for(lambda: slack.calls_to("views.update")[before:])[0]
    assert update.ok and update.args["view_id"] == view["id"]
    assert not buttons(update.args["view"]), "the vote buttons are replaced by the confirmation"
    return view_text(update.args["view"])


def submit(bot: RunningBot, view: dict, user: str, values: dict) -> httpx.Response:
    """Submit a modal with these input values ({block_id: {action_id: state}}), as Slack sends it."""
    payload = {"type": "view_submission", "team": {"id": TEAM}, "user": {"id": user}, "api_app_id": "A0FAKEAPP",
               "trigger_id": "trigger-submit", "view": {**view, "state": {"values": values}}}
    return bot.interaction(payload)


def open_home(bot: RunningBot, slack: SlackApiServer, user: str, tab: str = "home") -> None:
    bot.event({"type": "app_home_opened", "user": user, "channel": "D0APPHOME", "tab": tab,
               "event_ts": "1700000000.000100"})


def published(slack: SlackApiServer, user: str, after: int = 0) -> dict:
    """The Home tab published for `user` by the `after`+1-th publish call (waits for it)."""
    calls = wait_for(lambda: [c for c in slack.calls_to("views.publish") if c.args["user_id"] == user][after:])
    assert calls[0].ok, calls[0].response
    return calls[0].response["view"]


def publishes(slack: SlackApiServer, user: str) -> int:
    return len([c for c in slack.calls_to("views.publish") if c.args["user_id"] == user])
