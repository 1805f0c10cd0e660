"""Zero leakage for a wiki: restricted Confluence pages (to one person by email, to a group, to someone whose
email Confluence hides, and a page under a restricted parent) synced from the local Confluence through the
served bot's own sync (its readers looked up on the local Slack Web API and the local Microsoft Graph) into
the real index, then asked from Slack and Teams. A page's readers get its answer in a direct message;
anyone else, any channel, and everyone for the page whose reader cannot be named, never see its text,
title or footnote: not in an answer, a footnote, Show source, the Home tab or the sync's report. A page of a
space only a group may view, with no restriction of its own, reaches that group's members alone."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass

import pytest

from bot.core.reindex import report_text
from bot.slack.blocks import SLACK_STYLE
from bot.teams.config import TeamsSettings
from tests.bot.harness import start_bot, wait_for
from tests.bot.leakage import Document, leaked_tags, probes
from tests.bot.slack_ui import _click, open_home, published, publishes, view_text
from tests.bot.teams_ui import MEMBER
from tests.bot.test_leakage import Place, ask_core, ask_slack, ask_teams
from tests.fakes.bot_connector import BotConnector
from tests.fakes.confluence import EMAIL, TOKEN, FakeConfluence
from tests.fakes.graph import TOKEN as GRAPH_TOKEN
from tests.fakes.graph import FakeGraph
from tests.fakes.slack_api import SlackApiServer

ALICE_ENTRA, GROUPIE_ENTRA = "a11ce000-0000-4000-8000-000000000001", "9000e000-0000-4000-8000-000000000002"
LEADS_ENTRA = "1ead5000-0000-4000-8000-000000000003"
ALICE = {"type": "known", "accountId": "5b1", "email": "alice@example.com", "displayName": "Alice"}
HIDDEN = {"type": "known", "accountId": "5b2", "email": "", "displayName": "Someone"}  # Cloud hid the email
SCOPES = """default: [public]
dm: [eng, public]
slack: {C0ENG: [eng, public]}
teams: {"19:eng@thread.tacv2": [eng, public]}
"""
SOURCES = """sources:
  - {{name: wiki, type: confluence, url: "{url}", spaces: [ENG, LEADS], user_env: AIE_TEST_CONFLUENCE_USER,
     token_env: AIE_TEST_CONFLUENCE_TOKEN, collection: eng,
     groups: {{Eng-Leads: {{slack: S0LEADS, entra: {leads}}}}}}}
"""
_TOPICS = {"1": "welcome", "2": "salaries", "3": "reorg", "4": "layoffs", "5": "bands", "6": "hiring"}
SPACES = {"6": "LEADS"}  # a page's space, when not ENG: only the group Eng-Leads may view LEADS
# Who may read each page in a direct message (a restriction names readers; the page under "2" inherits it).
READERS = {"2": {"U0ALICE", ALICE_ENTRA}, "3": {"U0GROUPIE", GROUPIE_ENTRA}, "4": set(),
           "5": {"U0ALICE", ALICE_ENTRA}, "6": {"U0GROUPIE", GROUPIE_ENTRA}}


@dataclass(frozen=True)
class Page:
    id: str
    doc: Document

    def allows(self, place: Place) -> bool:
        return self.id not in READERS or (place.direct and place.user in READERS[self.id])


def pages() -> list[Page]:
    found = []
    for page_id, topic in _TOPICS.items():
        tag = f"QWIKI{topic.upper()}Z"
        sentences = [f"The {topic} rule {tag} number {n} is decided by the {topic} board within {n + 2} days."
                     for n in range(1, 5)]
        found.append(Page(page_id, Document(f"wiki/{SPACES.get(page_id, 'ENG')}/{page_id}.md", tag, sentences)))
    return found


@pytest.fixture
def wiki(monkeypatch):
    server = FakeConfluence()
    restricted = {"2": {"readers": [ALICE]}, "3": {"reader_groups": ["Eng-Leads"]}, "4": {"readers": [HIDDEN]}}
    for page in pages():
        body = "".join(f"<h2>Part {i + 1} {page.doc.tag}</h2><p>{s}</p>" for i, s in enumerate(page.doc.sentences))
        parent = "2" if page.id == "5" else ("1" if page.id not in ("1", "6") else None)
        server.add_page(SPACES.get(page.id, "ENG"), page.id, f"{_TOPICS[page.id].title()} {page.doc.tag}", body, parent=parent,
                        **restricted.get(page.id, {}))
    server.restrict_space("LEADS", groups=["Eng-Leads"])
    monkeypatch.setenv("AIE_TEST_CONFLUENCE_USER", EMAIL)
    monkeypatch.setenv("AIE_TEST_CONFLUENCE_TOKEN", TOKEN)
    with server:
        yield server


@pytest.fixture
def bot(wiki, shared_data_dir, tmp_path):
    (tmp_path / "scopes.yaml").write_text(SCOPES, encoding="utf-8")
    (tmp_path / "sources.yaml").write_text(SOURCES.format(url=wiki.url, leads=LEADS_ENTRA), encoding="utf-8")
    users = {"U0ALICE": {"email": "Alice@example.com"}, "U0GROUPIE": {"email": "groupie@example.com"},
             "U0PLAIN01": {"email": "plain@example.com"}}

    async def graph_token() -> str:
        return GRAPH_TOKEN

    with SlackApiServer(users=users) as slack, BotConnector() as connector, \
            FakeGraph({ALICE_ENTRA: [], GROUPIE_ENTRA: [LEADS_ENTRA], MEMBER: []},
                      people={"alice@example.com": ALICE_ENTRA}, groups={"eng-leads": LEADS_ENTRA}) as graph:
        slack.add_usergroup("S0LEADS", ["U0GROUPIE"], handle="eng-leads")
        chat = {"AIE_SCOPES_FILE": str(tmp_path / "scopes.yaml"), "AIE_SCOPES_DB": str(tmp_path / "scopes.sqlite3")}
        running = start_bot(shared_data_dir, tmp_path / "index", slack.base_url, chat_settings=chat,
                            teams=TeamsSettings(_env_file=None, anonymous_allowed=True, groups=True,
                                                graph_url=graph.url),
                            graph_token=graph_token, sources_file=tmp_path / "sources.yaml",
                            feedback_db=tmp_path / "feedback.sqlite3")
        try:
            report = running.kb.sync(by="the test")  # the served bot's sync, with the readers it wires
            assert report.ok, {n: o.error for n, o in report.sources.items()}
            yield running, slack, connector, report
        finally:
            running.stop()
        slack.assert_no_rejections()
        connector.assert_no_rejections()


SLACK = [Place("slack", "D0ALICE", "U0ALICE"), Place("slack", "D0GROUPIE", "U0GROUPIE"),
         Place("slack", "D0PLAIN", "U0PLAIN01"), Place("slack", "C0ENG", "U0ALICE"),
         Place("slack", "C0ENG", "U0GROUPIE")]
TEAMS = [Place("teams", "a:alice-chat", ALICE_ENTRA), Place("teams", "a:groupie-chat", GROUPIE_ENTRA),
         Place("teams", "a:member-chat", MEMBER), Place("teams", "19:eng@thread.tacv2;messageid=1", ALICE_ENTRA)]


def leaks(seen: str, place: Place) -> list[str]:
    by_tag = {p.doc.tag: p for p in pages()}
    return leaked_tags(seen, [p.doc for p in pages()], lambda doc: by_tag[doc.tag].allows(place))


def first_question(page: Page) -> str:
    return next(p.question for p in probes([page.doc]))


def test_a_restricted_page_reaches_exactly_its_readers(bot):
    running, slack, connector, _ = bot
    every_probe = [p.question for p in probes([p.doc for p in pages()])]
    one_each = [first_question(p) for p in pages()]

    for place in SLACK + TEAMS:  # every probe through the core, then one a page over HTTP
        assert leaks(ask_core(running, place, every_probe), place) == [], place
        seen = (ask_slack(running, slack, place, one_each) if place.platform == "slack"
                else ask_teams(running, connector, place, one_each))
        assert leaks(seen, place) == [], place
    for user in ("U0ALICE", "U0GROUPIE", "U0PLAIN01"):  # the Home tab lists what the viewer may read
        after = publishes(slack, user)
        open_home(running, slack, user)
        home = json.dumps(published(slack, user, after), ensure_ascii=False)
        assert leaks(home, Place("slack", "D0HOME", user)) == [], user

    by_id = {p.id: p for p in pages()}
    for page_id, place in (("2", SLACK[0]), ("5", SLACK[0]), ("3", SLACK[1]), ("6", SLACK[1]), ("2", TEAMS[0]),
                           ("3", TEAMS[1]), ("6", TEAMS[1])):
        page = by_id[page_id]
        seen = (ask_slack(running, slack, place, [first_question(page)]) if place.platform == "slack"
                else ask_teams(running, connector, place, [first_question(page)]))
        assert page.doc.tag in seen, f"{place.user} reads page {page_id} in a direct message"
        assert f"{page_id}/{_TOPICS[page_id].title()}" in seen, "its footnote links to the Confluence page"
    assert "QWIKILAYOFFSZ" not in json.dumps([c.args for c in slack.calls], ensure_ascii=False)


def test_show_source_of_a_readers_answer_opens_only_for_them(bot):
    running, slack, _, _ = bot
    salaries = next(p for p in pages() if p.id == "2")
    ask_slack(running, slack, SLACK[0], [first_question(salaries)])
    answer = next(c.args for c in reversed(slack.calls) if c.method == "chat.update" and c.args["channel"] == "D0ALICE"
                  and any(b.get("accessory", {}).get("action_id") == "show_source" for b in c.args["blocks"]))
    button = next(b["accessory"] for b in answer["blocks"] if b.get("accessory", {}).get("action_id") == "show_source")

    def show(user: str, channel: str) -> str:
        before = len(slack.calls_to("views.open"))
        _click(running, user, "show_source", button["value"], f"trigger-{user}-{before}",
               channel={"id": channel}, container={"type": "message"}, message={"ts": answer["ts"]})
        return view_text(wait_for(lambda: slack.calls_to("views.open")[before:])[0].response["view"])

    assert salaries.doc.tag in show("U0ALICE", "D0ALICE")
    assert salaries.doc.tag not in show("U0PLAIN01", "D0PLAIN")
    assert salaries.doc.tag not in show("U0GROUPIE", "C0ENG")


def test_the_syncs_report_names_a_restricted_page_only_where_it_may_be_read(bot):
    running, _, _, synced = bot
    services = running.services

    def report_in(place: Place) -> str:
        async def text() -> str:
            scope = await services.scopes.resolve(place.platform, place.conversation, place.user, place.direct)
            return report_text(synced.index, SLACK_STYLE, visible=await services.names_visible_to(scope))

        return asyncio.run_coroutine_threadsafe(text(), running._loop).result(60)

    named = {place: {p.id for p in pages() if p.doc.rel in report_in(place)} for place in SLACK[:4]}
    assert named == {SLACK[0]: {"1", "2", "5"}, SLACK[1]: {"1", "3", "6"}, SLACK[2]: {"1"}, SLACK[3]: {"1"}}
