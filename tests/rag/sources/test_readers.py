"""A restricted wiki page's readers, named by Confluence by email and group: the emails looked up on Slack
(the local Web API) and Teams (the local Microsoft Graph) at sync time, the groups mapped to chat groups by
the sources file (never by a chat group's name): the index holds their chat ids, the lookups are kept for a
while, and a lookup that fails keeps the last good documents."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from ai_employee.wiring import environment_readers
from rag.knowledge_base import KnowledgeBase
from rag.access import NOBODY
from rag.config import Settings
from rag.index.metadata import DocumentMeta
from rag.sources.base import SourceError
from rag.sources.people import EntraPeople, SlackPeople
from rag.sources.readers import MISS_TTL, TTL, ReaderResolver, ResolutionCache
from rag.types import Scope
from tests.fakes.confluence import EMAIL, TOKEN, FakeConfluence
from tests.fakes.graph import TOKEN as GRAPH_TOKEN
from tests.fakes.graph import FakeGraph
from tests.fakes.slack_api import SlackApiServer

ALICE = {"type": "known", "accountId": "5b1", "email": "Alice@Example.com", "displayName": "Alice"}
BOB = {"type": "known", "accountId": "5b3", "email": "bob@example.com", "displayName": "Bob"}
ALICE_ENTRA, HR_ENTRA = "a11ce000-0000-4000-8000-000000000001", "0000a000-0000-4000-8000-0000000000a4"
SALARIES = "<p>The salary band for a senior engineer tops out at 98,000 EUR a year.</p>"
BOARD = "<p>The board approved the acquisition of Initech for 12 million EUR.</p>"
LOOKALIKE_ENTRA = "10014a1e-0000-4000-8000-00000000bad1"  # a Microsoft 365 group anyone could name Board-Only
SOURCES = """sources:
  - {{name: wiki, type: confluence, url: "{url}", spaces: [ENG], user_env: AIE_TEST_CONFLUENCE_USER,
     token_env: AIE_TEST_CONFLUENCE_TOKEN, collection: eng, groups: {groups}}}
"""
HR_GROUPS = {"HR": {"slack": "S0HR", "entra": HR_ENTRA}}  # the wiki group HR's chat groups


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def slack():
    with SlackApiServer(users={"U0ALICE": {"email": "alice@example.com"}, "U0BOB": {"email": "BOB@example.com"},
                               "U0CAROL": {}}) as server:
        server.add_usergroup("S0HR", ["U0CAROL"], handle="hr")
        yield server


@pytest.fixture
def graph():
    with FakeGraph(people={"alice@example.com": ALICE_ENTRA}, groups={"HR": HR_ENTRA}) as server:
        yield server


def resolver(slack: SlackApiServer, graph: FakeGraph, path: Path, clock=None) -> ReaderResolver:
    cache = ResolutionCache(path, clock=clock) if clock else ResolutionCache(path)
    return ReaderResolver([SlackPeople("xoxb-test-token", api_url=slack.base_url),
                           EntraPeople(lambda: GRAPH_TOKEN, graph_url=graph.url)], cache)


@pytest.fixture
def wiki(shared_data_dir, tmp_path, monkeypatch):
    server = FakeConfluence()
    server.add_page("ENG", "1", "Engineering", "<p>Welcome to engineering.</p>")
    server.add_page("ENG", "4", "Salaries", SALARIES, parent="1", readers=[ALICE], reader_groups=["HR"])
    monkeypatch.setenv("AIE_TEST_CONFLUENCE_USER", EMAIL)
    monkeypatch.setenv("AIE_TEST_CONFLUENCE_TOKEN", TOKEN)
    with server:
        file = tmp_path / "sources.yaml"
        map_groups(file, server, HR_GROUPS)
        # as the CLI wires it: outside `serve`, readers are looked up on the chat surfaces the environment names
        yield server, KnowledgeBase(Settings(data_dir=shared_data_dir, sources_file=file, _env_file=None),
                                    tmp_path / "index", find_readers=environment_readers)


def map_groups(file: Path, server: FakeConfluence, groups: dict) -> None:
    """The sources file with these `groups:` (before the knowledge base first reads it)."""
    file.write_text(SOURCES.format(url=server.url, groups=json.dumps(groups)), encoding="utf-8")


def readers_of(kb: KnowledgeBase, name: str) -> set[str]:
    return {i for c in kb.retriever.snapshot.chunks if c.file == name for i in c.access}


def reads(kb: KnowledgeBase, *ids: str) -> bool:
    """Whether someone with these ids finds the salary band in a direct message."""
    scope = Scope(collections=frozenset({"eng"}), readers=frozenset(ids))
    return any("98,000" in h.chunk.text for h in kb.retriever.search("salary band senior engineer", allowed=scope))


def test_a_restricted_pages_readers_are_its_slack_and_teams_users_and_groups(wiki, slack, graph, tmp_path):
    _, kb = wiki
    kb.readers = resolver(slack, graph, tmp_path / "readers.json")

    report = kb.sync()

    assert report.ok, report.sources["wiki"].error
    assert readers_of(kb, "wiki/ENG/4.md") == {"u0alice", "s0hr", ALICE_ENTRA, HR_ENTRA}
    assert reads(kb, "U0ALICE") and reads(kb, "U0CAROL", "S0HR") and reads(kb, ALICE_ENTRA)
    assert not reads(kb, "U0BOB") and not reads(kb, "U0CAROL")
    assert readers_of(kb, "wiki/ENG/1.md") == set()  # unrestricted


def test_without_a_chat_surface_a_page_restricted_by_email_or_group_is_served_to_nobody(wiki):
    confluence, kb = wiki
    map_groups(kb.settings.sources_file, confluence, {})  # a group mapped to chat groups needs no surface
    kb.readers = None

    assert kb.sync().ok
    assert readers_of(kb, "wiki/ENG/4.md") == {NOBODY}
    assert not reads(kb, "U0ALICE", "S0HR")


def test_a_failed_lookup_keeps_the_last_good_readers_until_it_works_again(wiki, slack, graph, tmp_path):
    confluence, kb = wiki
    kb.readers = resolver(slack, graph, tmp_path / "readers.json")
    assert kb.sync().ok
    confluence.pages["4"].readers = [ALICE, BOB]  # Bob may read it now; his address is not known yet
    slack.fail_next("users.lookupByEmail", status=503)

    failed = kb.sync().sources["wiki"]

    assert not failed.ok and "Slack answered service_unavailable" in failed.error and "wiki" in failed.error
    assert "xoxb" not in failed.error
    assert readers_of(kb, "wiki/ENG/4.md") == {"u0alice", "s0hr", ALICE_ENTRA, HR_ENTRA}
    assert not reads(kb, "U0BOB")
    assert kb.sync().ok
    assert reads(kb, "U0BOB") and reads(kb, "U0ALICE")


def test_a_missing_scope_names_the_scope_and_the_variable(wiki, slack, graph, tmp_path):
    _, kb = wiki
    kb.readers = resolver(slack, graph, tmp_path / "readers.json")
    slack.fail_next("users.lookupByEmail", "missing_scope")

    failed = kb.sync().sources["wiki"]

    assert not failed.ok and "users:read.email" in failed.error and failed.variable == "SLACK_BOT_TOKEN"
    assert kb.store.current_manifest() is None  # nothing was published to nobody or to the wrong people


def thousand_pages() -> dict[str, DocumentMeta]:
    emails = [f"email:person{i}@example.com" for i in range(10)] + ["email:alice@example.com"]
    return {f"ENG/{n}.md": DocumentMeta(access=(emails[n % len(emails)], "s0hr", HR_ENTRA, "U0KEPT"))
            for n in range(1000)}


def lookups(slack: SlackApiServer, graph: FakeGraph) -> tuple[int, int, int]:
    by_email = sum(c.method == "users.lookupByEmail" for c in slack.calls)
    return by_email, sum(c.method == "usergroups.list" for c in slack.calls), len(graph.calls)


def test_a_thousand_pages_cost_one_lookup_a_person_and_none_while_the_answers_are_kept(slack, graph, tmp_path):
    clock, pages = Clock(), thousand_pages()

    first = resolver(slack, graph, tmp_path / "readers.json", clock).resolve("wiki", pages)

    # 11 addresses on Slack; on Graph an address no user principal name has is asked by mail too. No group is
    # looked up: the wiki's groups come mapped to chat groups (the sources file)
    assert lookups(slack, graph) == (11, 0, 21)
    assert set(first["ENG/10.md"].access) == {"u0alice", ALICE_ENTRA, "s0hr", HR_ENTRA, "U0KEPT"}
    assert set(first["ENG/0.md"].access) == {"s0hr", HR_ENTRA, "U0KEPT"}  # person0 is known nowhere: dropped
    clock.now += MISS_TTL - 1
    again = resolver(slack, graph, tmp_path / "readers.json", clock).resolve("wiki", pages)  # read from the file
    assert again == first and lookups(slack, graph) == (11, 0, 21)
    clock.now += 2  # the "no one" answers are asked again, the ids found are kept
    resolver(slack, graph, tmp_path / "readers.json", clock).resolve("wiki", pages)
    assert lookups(slack, graph) == (21, 0, 41)
    clock.now += TTL
    resolver(slack, graph, tmp_path / "readers.json", clock).resolve("wiki", pages)
    assert lookups(slack, graph) == (32, 0, 62)


def test_a_group_no_surface_knows_leaves_a_page_to_nobody(slack, graph, tmp_path):
    pages = {"a.md": DocumentMeta(access=("group:finance",)), "b.md": DocumentMeta(access=None)}

    resolved = resolver(slack, graph, tmp_path / "readers.json").resolve("wiki", pages)

    assert resolved["a.md"].access == (NOBODY,) and resolved["b.md"].access is None


def board_minutes(kb: KnowledgeBase, *ids: str) -> bool:
    """Whether someone with these ids finds the board's minutes in a direct message."""
    scope = Scope(collections=frozenset({"eng"}), readers=frozenset(ids))
    return any("Initech" in h.chunk.text for h in kb.retriever.search("board acquisition Initech", allowed=scope))


def test_a_chat_group_named_like_a_wiki_group_never_reads_its_pages(wiki, slack, graph, tmp_path):
    """A page restricted to the wiki group Board-Only (and Alice): anyone allowed to create a Slack user group
    (handle board-only) or any Entra user (a Microsoft 365 group named Board-Only) could make the one group of
    that name and was let in, the match kept a day in readers.json. A wiki group the sources file does not map
    lets in only the people the page names, whatever a cache from before holds."""
    confluence, kb = wiki
    confluence.add_page("ENG", "8", "Board minutes", BOARD, parent="1", readers=[ALICE], reader_groups=["Board-Only"])
    slack.add_usergroup("S0LOOK", ["U0MALLORY"], handle="board-only", name="Board-Only")
    graph.groups["board-only"] = LOOKALIKE_ENTRA
    cache = tmp_path / "readers.json"
    cache.write_text(json.dumps({"Slack": {"group:board-only": ["S0LOOK", time.time()]},
                                 "Teams": {"group:board-only": [LOOKALIKE_ENTRA, time.time()]}}), encoding="utf-8")
    kb.readers = resolver(slack, graph, cache)

    report = kb.sync()

    assert report.ok, report.sources["wiki"].error
    assert readers_of(kb, "wiki/ENG/8.md") == {"u0alice", ALICE_ENTRA}, "only the people it names"
    assert board_minutes(kb, "U0ALICE") and board_minutes(kb, ALICE_ENTRA)
    assert not board_minutes(kb, "U0MALLORY", "S0LOOK") and not board_minutes(kb, LOOKALIKE_ENTRA)
    assert not slack.calls_to("usergroups.list") and not [c for c in graph.calls if c.user.startswith("groups")]
    assert report.sources["wiki"].fetched.notes == [
        "the wiki group board-only is mapped to no chat group (groups: in the sources file): its members are let "
        "in to none of the 1 page it may read"]
    assert "board-only" not in cache.read_text(), "a group matched by name before is forgotten"


def test_a_wiki_group_lets_in_the_chat_groups_the_sources_file_maps_it_to(wiki, slack, graph, tmp_path):
    confluence, kb = wiki
    confluence.add_page("ENG", "8", "Board minutes", BOARD, parent="1", reader_groups=["Board-Only"])
    slack.add_usergroup("S0LOOK", ["U0MALLORY"], handle="board-only", name="Board-Only")
    slack.add_usergroup("S0BOARD", ["U0CAROL"], handle="the-board", name="The board")
    graph.groups["board-only"] = LOOKALIKE_ENTRA
    map_groups(kb.settings.sources_file, confluence, {**HR_GROUPS, "board-only": {"slack": "S0BOARD"}})
    kb.readers = resolver(slack, graph, tmp_path / "readers.json")

    assert kb.sync().ok

    assert readers_of(kb, "wiki/ENG/8.md") == {"s0board"}
    assert board_minutes(kb, "U0CAROL", "S0BOARD")
    assert not board_minutes(kb, "U0MALLORY", "S0LOOK") and not board_minutes(kb, LOOKALIKE_ENTRA)


def test_a_refused_graph_token_fails_the_lookup_without_showing_it(slack, graph, tmp_path):
    people = ReaderResolver([EntraPeople(lambda: "a-wrong-graph-token", graph_url=graph.url)],
                            ResolutionCache(tmp_path / "readers.json"))

    with pytest.raises(SourceError) as failed:
        people.resolve("wiki", {"a.md": DocumentMeta(access=("email:alice@example.com",))})

    assert "Microsoft Graph answered HTTP 401" in str(failed.value) and "wrong-graph" not in str(failed.value)
    assert not failed.value.transient


def test_sources_sync_looks_the_readers_up_with_the_slack_settings_of_the_environment(wiki, slack, monkeypatch):
    """`ai-employee sources sync` has no served bot: the knowledge base asks the Slack the environment names."""
    confluence, kb = wiki
    map_groups(kb.settings.sources_file, confluence, {"HR": {"slack": "S0HR"}})
    monkeypatch.setenv("SLACK_BOT_TOKEN", "xoxb-test-token")
    monkeypatch.setenv("SLACK_API_URL", slack.base_url)
    monkeypatch.delenv("AIE_TEAMS_GROUPS", raising=False)

    assert kb.sync().ok
    assert readers_of(kb, "wiki/ENG/4.md") == {"u0alice", "s0hr"}
    assert "xoxb" not in repr(kb.readers)


def test_graph_throttling_is_waited_out_as_retry_after_asks(graph, tmp_path):
    waits: list[float] = []
    people = EntraPeople(lambda: GRAPH_TOKEN, graph_url=graph.url, sleep=waits.append)
    graph.fail_next(429)
    graph.fail_next(503)

    resolved = ReaderResolver([people], ResolutionCache(tmp_path / "readers.json")).resolve(
        "wiki", {"a.md": DocumentMeta(access=("email:alice@example.com",))})

    assert resolved["a.md"].access == (ALICE_ENTRA,)
    assert waits[0] == 1.0 and len(waits) == 2  # the 429's Retry-After, then a backoff after the 503
    graph.fail_next(503, times=3)
    with pytest.raises(SourceError) as failed:
        ReaderResolver([people], ResolutionCache(tmp_path / "other.json")).resolve(
            "wiki", {"a.md": DocumentMeta(access=("email:alice@example.com",))})
    assert failed.value.transient and "HTTP 503" in str(failed.value)


def test_a_lookup_answered_too_slowly_fails_at_its_deadline(slack, graph, tmp_path):
    """Each wait is well within the clients' read timeouts; the answers as a whole come seconds later."""
    graph.trickle_every = 0.1
    slack.slow("users.lookupByEmail", 4)
    page = {"a.md": DocumentMeta(access=("email:alice@example.com",))}
    surfaces = {"Microsoft Graph": EntraPeople(lambda: GRAPH_TOKEN, graph_url=graph.url, deadline=1),
                "Slack": SlackPeople("xoxb-test-token", api_url=slack.base_url, deadline=1)}

    for name, people in surfaces.items():
        began = time.monotonic()
        with pytest.raises(SourceError) as failed:
            ReaderResolver([people], ResolutionCache(tmp_path / f"{name}.json")).resolve("wiki", page)
        assert time.monotonic() - began < 2.5, f"{name} was waited for past its deadline"
        assert f"{name} took longer than 1 s to answer" in str(failed.value) and failed.value.transient


def test_an_unreadable_cache_is_asked_anew_and_rewritten(slack, graph, tmp_path):
    cache = tmp_path / "readers.json"
    cache.write_text('{"Slack": {"email:alice@example.com": ["U0MALLORY", "yesterday"]}, "Teams": [1]}')
    page = {"a.md": DocumentMeta(access=("email:alice@example.com",))}

    assert set(resolver(slack, graph, cache).resolve("wiki", page)["a.md"].access) == {"u0alice", ALICE_ENTRA}
    cache.write_text("{not json")
    assert set(resolver(slack, graph, cache).resolve("wiki", page)["a.md"].access) == {"u0alice", ALICE_ENTRA}
    assert '"email:alice@example.com": ["U0ALICE"' in cache.read_text()


def test_a_page_restricted_while_the_lookup_fails_reaches_no_one_and_the_rest_keep_their_readers(
        wiki, slack, graph, tmp_path):
    """The lookup failing kept the whole source as the last good sync had it: a page everyone read, restricted
    at the source since, stayed everyone's for as long as the lookups failed."""
    confluence, kb = wiki
    confluence.add_page("ENG", "7", "Reorg", "<p>The reorganisation starts in March.</p>")
    kb.readers = resolver(slack, graph, tmp_path / "readers.json")
    assert kb.sync().ok
    assert readers_of(kb, "wiki/ENG/7.md") == set(), "everyone's"
    confluence.pages["7"].readers = [BOB]  # only Bob, whose address is not known yet
    slack.fail_next("users.lookupByEmail", status=503)

    failed = kb.sync().sources["wiki"]

    assert not failed.ok and failed.restricted == ("ENG/7.md",)
    assert readers_of(kb, "wiki/ENG/7.md") == {NOBODY}
    assert readers_of(kb, "wiki/ENG/1.md") == set() and reads(kb, "U0ALICE"), "the rest keep their last readers"
    assert kb.sync().ok
    assert readers_of(kb, "wiki/ENG/7.md") == {"u0bob"}


def welcome(kb: KnowledgeBase, *ids: str) -> bool:
    """Whether someone with these ids finds the engineering welcome page in a direct message."""
    scope = Scope(collections=frozenset({"eng"}), readers=frozenset(ids))
    return any("Welcome to engineering" in h.chunk.text for h in kb.retriever.search("welcome to engineering",
                                                                                      allowed=scope))


def test_a_page_of_a_space_only_hr_may_view_reaches_hr_alone(wiki, slack, graph, tmp_path):
    """A page with no restriction of its own, in a space only HR may view, reached everyone who may read the
    source's collection (space permissions were not read)."""
    confluence, kb = wiki
    confluence.restrict_space("ENG", groups=["HR"])
    kb.readers = resolver(slack, graph, tmp_path / "readers.json")

    assert kb.sync().ok

    assert readers_of(kb, "wiki/ENG/1.md") == {"s0hr", HR_ENTRA}
    assert welcome(kb, "U0CAROL", "S0HR") and welcome(kb, "some-entra-user", HR_ENTRA)
    assert not welcome(kb, "U0BOB") and not welcome(kb, ALICE_ENTRA)
    # The salaries page names Alice and HR: only HR is named by the space as well (Alice may not view ENG)
    assert reads(kb, "U0CAROL", "S0HR") and not reads(kb, "U0ALICE")
