"""Entra groups on access lists in Teams, over real HTTP: the bot asks a local Microsoft Graph (every page of
it) which groups the asker is in, keeps the answer a while, and when Graph says no quotes the document to the
people named on it alone — and logs that once, without the token."""

from __future__ import annotations

import logging

import pytest

from bot.teams.config import TeamsSettings
from tests.bot.scoped import SALARY, TEAMS_LEADS, scoped_index, start_scoped_bot  # noqa: F401 - the fixture
from tests.bot.teams_ui import ADMIN, MEMBER
from tests.bot.teams.test_scopes_teams import HR_CHANNEL, PAY, ask
from tests.fakes.graph import TOKEN, FakeGraph

LEAD = "aad0000e-0000-4000-8000-00000000ead1"  # in TEAMS_LEADS, through a nested group
OTHER_GROUPS = [f"0000000{n}-aaaa-4000-8000-000000000000" for n in range(1, 5)]


@pytest.fixture
def graph():
    # Five groups a page of two each: TEAMS_LEADS comes on the third page, in upper case.
    members = {LEAD: [*OTHER_GROUPS, TEAMS_LEADS.upper()], MEMBER: OTHER_GROUPS[:3]}
    with FakeGraph(members, page_size=2) as server:
        yield server


@pytest.fixture
def teams(scoped_index, graph, tmp_path):  # noqa: F811
    settings = TeamsSettings(_env_file=None, anonymous_allowed=True, admin_ids=ADMIN, groups=True,
                             graph_url=graph.url)

    async def token() -> str:
        return TOKEN

    running = start_scoped_bot(scoped_index, tmp_path, None, teams=settings, graph_token=token)
    yield running
    running.stop()


def test_a_member_of_a_listed_group_reads_the_document_in_a_personal_chat_and_others_do_not(teams, connector,
                                                                                            graph):
    assert SALARY in ask(teams, connector, "a:lead-chat", PAY, user=LEAD)
    assert SALARY not in ask(teams, connector, "a:member-chat", PAY, user=MEMBER)
    assert {c.authorization for c in graph.calls} == {f"Bearer {TOKEN}"}


def test_a_member_of_a_listed_group_is_not_quoted_the_document_in_a_channel(teams, connector, graph):
    assert SALARY not in ask(teams, connector, f"{HR_CHANNEL};messageid=11", PAY, user=LEAD)
    assert graph.calls == [], "in a channel everyone reads the answer: nobody's groups count"


def test_every_page_is_read_and_kept_for_the_next_question(teams, connector, graph):
    assert SALARY in ask(teams, connector, "a:lead-chat", PAY, user=LEAD)
    assert SALARY in ask(teams, connector, "a:lead-chat", "What is salary band E4?", user=LEAD)
    assert [c.skip for c in graph.calls_for(LEAD)] == [0, 2, 4], "one lookup (three pages) for two questions"


def test_when_graph_refuses_group_members_are_not_quoted_and_one_line_is_logged(teams, connector, graph, caplog):
    graph.fail_next(403)
    with caplog.at_level(logging.INFO, logger="bot.core.scopes.groups"):
        assert SALARY not in ask(teams, connector, "a:lead-chat", PAY, user=LEAD)
        assert SALARY not in ask(teams, connector, "a:lead-chat", "What is salary band E4?", user=LEAD)
    assert [c.status for c in graph.calls] == [403], "not asked again before the back-off is over"
    lines = [r.getMessage() for r in caplog.records if r.name == "bot.core.scopes.groups"]
    assert len(lines) == 1 and "HTTP 403" in lines[0] and "Microsoft Graph" in lines[0]
    assert TOKEN not in caplog.text
