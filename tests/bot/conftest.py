"""The bot over HTTP against the local Slack Web API server or the local Bot Connector, answering from the
sample handbook."""

from __future__ import annotations

import pytest

from rag.knowledge_base import KnowledgeBase
from rag.config import Settings
from tests.bot.harness import start_bot
from tests.bot.teams_ui import start_teams_bot
from tests.conftest import HANDBOOK, build
from tests.fakes.bot_connector import BotConnector
from tests.fakes.slack_api import SlackApiServer


@pytest.fixture(scope="module")
def handbook_index(shared_data_dir, tmp_path_factory):
    index_dir = tmp_path_factory.mktemp("bot-index")
    build(KnowledgeBase(Settings(data_dir=shared_data_dir, _env_file=None), index_dir), [HANDBOOK])
    return shared_data_dir, index_dir


@pytest.fixture
def slack():
    with SlackApiServer(users={"U0ADMIN01": {}, "U0OWNER01": {"is_owner": True}, "U0PLAIN01": {}}) as server:
        yield server
        server.assert_no_rejections()


@pytest.fixture
def bot(handbook_index, slack, tmp_path):
    data_dir, index_dir = handbook_index
    # Votes and /scope changes of its own: a test that changes a channel's scope changes it for itself only.
    running = start_bot(data_dir, index_dir, slack.base_url, gate_threshold=0.85,
                        feedback_db=tmp_path / "feedback.sqlite3",
                        chat_settings={"AIE_SCOPES_DB": str(tmp_path / "scopes.sqlite3")})
    yield running
    running.stop()


@pytest.fixture
def connector():
    """The local Bot Connector Teams replies go to; fails the test if it refused anything."""
    with BotConnector() as server:
        yield server
        server.assert_no_rejections()


@pytest.fixture
def teams(handbook_index, tmp_path):
    """The bot with Teams only (in the SDK's anonymous local mode), on the sample handbook."""
    running = start_teams_bot(handbook_index, tmp_path)
    yield running
    running.stop()
