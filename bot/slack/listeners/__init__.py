"""Listeners grouped by Slack feature; each registers its handlers on the app."""

from slack_bolt.async_app import AsyncApp

from bot.slack.listeners import actions, assistant, commands, events, home, scope
from bot.slack.services import SlackServices


def register(app: AsyncApp, services: SlackServices) -> None:
    assistant.register(app, services)  # before `events`: it claims messages in assistant threads
    events.register(app, services)
    actions.register(app, services)
    commands.register(app, services)
    home.register(app, services)
    scope.register(app, services)
