"""The shared core is assembled by the composition root alone: leaving out a collaborator is an error at
start, never a silent default (a scope resolver that would serve every collection everywhere, an admin
list read from nowhere)."""

from __future__ import annotations

import pytest

from bot.core.services import CoreServices
from bot.slack.config import SlackSettings
from bot.slack.services import SlackServices

GIVEN = dict(answerer=None, feedback=None, reindexer=None, deliveries=None, conversation_state=None,
             adjuster=None, scopes=None, memory=None, index=None)


@pytest.mark.parametrize("missing", ["scopes", "adjuster", "memory", "index"])
def test_the_core_refuses_to_start_without_a_collaborator(missing):
    given = {name: value for name, value in GIVEN.items() if name != missing}
    with pytest.raises(TypeError, match=missing):
        CoreServices(**given)


def test_slack_services_need_their_admin_check_given():
    settings = SlackSettings(_env_file=None, slack_bot_token="xoxb-test", slack_signing_secret="secret")
    with pytest.raises(TypeError, match="admins"):
        SlackServices(assistant=None, settings=settings)
