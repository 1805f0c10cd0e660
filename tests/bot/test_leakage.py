"""Zero leakage: questions generated from every document of a corpus with three collections, a public
folder and access-listed documents, asked from every place and person in Slack and in Teams, with the
answer cache cold and warm (the same questions already answered elsewhere, cached in Redis), and again
after a reindex that moves documents between collections. Nothing from a document outside the asker's scope
may appear anywhere the reader looks: the streamed text, the finished message, its footnotes and citations,
a refusal's suggestions, the Home tab, the Teams review card."""

from __future__ import annotations

import asyncio
import json
import shutil
from dataclasses import dataclass, replace

import pytest
import redis

from rag.knowledge_base import KnowledgeBase
from bot.core.answering import Question
from rag.config import Settings
from rag.feedback import CitedChunk
from tests.bot.harness import BOT_USER, TEAM, start_bot, wait_for
from tests.bot.leakage import TEAMS_ONCALL, Document, documents, leaked_tags, probes, write
from tests.bot.slack_ui import open_home, published, publishes
from tests.bot.teams_ui import ADMIN, MEMBER, activity, card_action, post
from tests.conftest import build
from tests.fakes.bot_connector import BotConnector
from tests.fakes.slack_api import SlackApiServer

SCOPES = """default: [public]
dm: [hr, eng, public]
slack: {C0HR: [hr, public], C0ENG: [eng, public], C0FIN: [finance]}
teams: {"19:eng@thread.tacv2": [eng, public], "19:fin@thread.tacv2": [finance, public]}
"""
COLLECTIONS = {"C0HR": {"hr", "public"}, "C0ENG": {"eng", "public"}, "C0FIN": {"finance"}, "C0GENERAL": {"public"},
               "19:eng@thread.tacv2": {"eng", "public"}, "19:fin@thread.tacv2": {"finance", "public"}}
DM = {"hr", "eng", "public"}
GROUPS = {"S0HRLEADS": ["U0GROUPIE"]}
BATCH = 12


@dataclass(frozen=True)
class Place:
    platform: str
    conversation: str
    user: str

    @property
    def direct(self) -> bool:
        return self.conversation.startswith(("D", "a:"))

    def allows(self, doc: Document) -> bool:
        collections = DM if self.direct else COLLECTIONS[self.conversation.split(";")[0]]
        if doc.collection not in collections:
            return False
        readers = {self.user} | {g for g, members in GROUPS.items() if self.user in members}
        return not doc.access or (self.direct and bool(readers & set(doc.access)))


SLACK_PLACES = [Place("slack", "C0HR", "U0PLAIN01"), Place("slack", "C0ENG", "U0ONCALL"),
                Place("slack", "C0FIN", "U0HRLEAD"), Place("slack", "C0GENERAL", "U0PLAIN01"),
                Place("slack", "D0HRLEAD", "U0HRLEAD"), Place("slack", "D0GROUPIE", "U0GROUPIE"),
                Place("slack", "D0ONCALL", "U0ONCALL"), Place("slack", "D0PLAIN", "U0PLAIN01")]
TEAMS_PLACES = [Place("teams", "19:eng@thread.tacv2;messageid=1", TEAMS_ONCALL),
                Place("teams", "19:fin@thread.tacv2;messageid=2", MEMBER),
                Place("teams", "a:oncall-chat", TEAMS_ONCALL), Place("teams", "a:member-chat", MEMBER)]


@pytest.fixture(scope="module")
def corpus(shared_data_dir, tmp_path_factory):
    root = tmp_path_factory.mktemp("leakage")
    docs = documents()
    write(root / "docs", docs)
    (root / "scopes.yaml").write_text(SCOPES, encoding="utf-8")
    return root, docs


@pytest.fixture
def bot(request, corpus, shared_data_dir, redis_process, tmp_path):
    """The bot with Slack and Teams on the corpus; the index on FAISS, or with the parameter "milvus" on Milvus Lite."""
    from bot.teams.config import TeamsSettings

    root, _ = corpus
    index_dir = tmp_path / "index"
    backend = {} if getattr(request, "param", "faiss") == "faiss" else {
        "vector_store": "milvus", "milvus_uri": str(tmp_path / "milvus.db")}
    shutil.copytree(root / "docs", tmp_path / "docs")
    build(KnowledgeBase(Settings(data_dir=shared_data_dir, _env_file=None, **backend), index_dir), [tmp_path / "docs"])
    with SlackApiServer(users={"U0PLAIN01": {}, "U0ONCALL": {}, "U0HRLEAD": {}, "U0GROUPIE": {}}) as slack, \
            BotConnector() as connector:
        for group, members in GROUPS.items():
            slack.add_usergroup(group, members)
        chat = {"AIE_SCOPES_FILE": str(root / "scopes.yaml"), "AIE_SCOPES_DB": str(tmp_path / "scopes.sqlite3"),
                "AIE_MAX_CONCURRENT_ANSWERS": 4}
        running = start_bot(shared_data_dir, index_dir, slack.base_url, chat_settings=chat,
                            teams=TeamsSettings(_env_file=None, anonymous_allowed=True, admin_ids=ADMIN),
                            feedback_db=tmp_path / "feedback.sqlite3", redis_url=redis_process.url, **backend)
        try:
            yield running, slack, connector, tmp_path / "docs"
        finally:
            running.stop()
        slack.assert_no_rejections()
        connector.assert_no_rejections()


def slack_seen(slack: SlackApiServer, channel: str, since: int) -> tuple[str, int]:
    """Everything sent to `channel` after call number `since` (any method), as text; and how many answers finished."""
    calls = [c for c in slack.calls[since:] if c.args.get("channel") == channel]
    finished = [c for c in calls if c.method == "chat.update"
                and any(b.get("type") == "context_actions" for b in c.args.get("blocks") or [])]
    return json.dumps([c.args for c in calls], ensure_ascii=False), len(finished)


class Asked:
    """Questions sent to one place over its chat surface: `progress()` is what arrived there since, and how many
    answers finished."""

    def __init__(self, progress, count: int) -> None:
        self.progress, self.count = progress, count

    def finished(self) -> bool:
        return self.progress()[1] >= self.count

    def seen(self) -> str:
        return self.progress()[0]


def send_slack(running, slack, place: Place, questions: list[str]) -> Asked:
    since = len(slack.calls)
    for question in questions:
        text = question if place.direct else f"<@{BOT_USER}> {question}"
        ts = slack.seed_message(place.conversation, text, user=place.user)
        kind = {"type": "message", "channel_type": "im"} if place.direct else {"type": "app_mention"}
        running.event({**kind, "channel": place.conversation, "user": place.user, "text": text, "ts": ts,
                       "event_ts": ts, "team": TEAM})
    return Asked(lambda: slack_seen(slack, place.conversation, since), len(questions))


def send_teams(running, connector, place: Place, questions: list[str]) -> Asked:
    since = len(connector.calls_to(place.conversation))
    for question in questions:
        post(running, activity(connector, question, conversation=place.conversation, user=place.user,
                               kind="personal" if place.direct else "channel", mention=not place.direct))

    def progress() -> tuple[str, int]:
        calls = connector.calls_to(place.conversation)[since:]
        answered = [c for c in connector.final_messages(place.conversation) if c in calls]
        return json.dumps([c.body for c in calls], ensure_ascii=False), len(answered)

    return Asked(progress, len(questions))


def ask_slack(running, slack, place: Place, questions: list[str]) -> str:
    """The questions asked in one Slack place, and everything sent there until each is answered."""
    asked = send_slack(running, slack, place, questions)
    wait_for(asked.finished, 300)
    return asked.seen()


def ask_teams(running, connector, place: Place, questions: list[str]) -> str:
    """The questions asked in one Teams place, and everything sent there until each is answered."""
    asked = send_teams(running, connector, place, questions)
    wait_for(asked.finished, 300)
    return asked.seen()


class Seen:
    """A reply sink that keeps everything an answer would show: streamed text, the final text, every
    citation (file, title, section, passage) and the passages a refusal suggests."""

    def __init__(self) -> None:
        self.parts: list[str] = []

    async def append(self, text: str) -> None:
        self.parts.append(text)

    async def finish(self, answer, answer_id) -> None:
        shown = [*answer.citations, *answer.sources]
        self.parts += [answer.text, *(json.dumps(getattr(c, "chunk", c).to_dict(), ensure_ascii=False) for c in shown)]

    async def fail(self, message: str) -> None:
        self.parts.append(message)

    async def notice(self, message: str) -> None:
        self.parts.append(message)


def ask_core(running, place: Place, questions: list[str]) -> str:
    """The chat-neutral core as both adapters call it: the place's scope from the one resolver, then the answerer."""
    services = running.services

    async def one(question: str) -> str:
        conversation = place.conversation.split(";")[0]
        scope = await services.scopes.resolve(place.platform, conversation, place.user, place.direct)
        seen = Seen()
        await services.answerer.answer(Question(question, place.conversation, place.user, platform=place.platform,
                                                scope=scope), seen)
        return " ".join(seen.parts)

    async def batch() -> list[str]:
        return await asyncio.gather(*(one(q) for q in questions))

    return " ".join(asyncio.run_coroutine_threadsafe(batch(), running._loop).result(300))


def sweep(running, slack, connector, docs: list[Document], places: list[Place], *, core: bool = False,
          questions: list[str] | None = None) -> dict[str, list[str]]:
    """The questions (default: every probe) from every place — through the core, one place after another, or
    through each place's chat surface over HTTP, every place at once (a personal chat in Teams streams one
    answer at a time, at Teams' pace); the tags each place saw that it must not have."""
    questions = questions or [p.question for p in probes(docs)]
    leaks: dict[str, list[str]] = {}

    def check(place: Place, seen: str) -> None:
        if found := leaked_tags(seen, docs, place.allows):
            leaks.setdefault(f"{place.platform} {place.conversation} {place.user}", []).extend(found)

    for start in range(0, len(questions), BATCH):
        part = questions[start : start + BATCH]
        if core:
            for place in places:
                check(place, ask_core(running, place, part))
            continue
        asked = [(place, send_slack(running, slack, place, part) if place.platform == "slack"
                  else send_teams(running, connector, place, part)) for place in places]
        wait_for(lambda: all(a.finished() for _, a in asked), 300)
        for place, a in asked:
            check(place, a.seen())
    return leaks


def one_per_document(docs: list[Document]) -> list[str]:
    return [next(p.question for p in probes([doc])) for doc in docs]


def answered_tags(running, docs: list[Document]) -> set[str]:
    """Tags of the documents the stored answers cite (the sweep must have reached every document somewhere)."""
    store = running.services.feedback
    rows = store._conn.execute("SELECT answer_id FROM answers").fetchall()
    files = {c.file for (answer_id,) in rows for c in store.answer(answer_id).citations}
    return {d.tag for d in docs if d.rel in files}


def test_no_place_ever_sees_a_document_outside_its_scope(bot):
    running, slack, connector, docs_dir = bot
    docs = documents()
    cache = redis.Redis.from_url(running.kb.settings.redis_url.get_secret_value())
    places = SLACK_PLACES + TEAMS_PLACES
    assert len(probes(docs)) >= 140

    # Every probe from every place and person through the core, the cache cold…
    cache.flushdb()
    assert sweep(running, slack, connector, docs, places, core=True) == {}
    assert answered_tags(running, docs) == {d.tag for d in docs}, "every document is quoted where it is allowed"
    # …and warm: each question is now cached from every other place.
    assert sweep(running, slack, connector, docs, list(reversed(places)), core=True) == {}
    # Over HTTP through Slack and Teams, one question per document, cold and then warm.
    sample = one_per_document(docs)
    cache.flushdb()
    assert sweep(running, slack, connector, docs, places, questions=sample) == {}
    assert sweep(running, slack, connector, docs, list(reversed(places)), questions=sample) == {}

    for user in sorted({p.user for p in SLACK_PLACES}):  # the Home tab lists what the viewer may read
        after = publishes(slack, user)
        open_home(running, slack, user)
        home = json.dumps(published(slack, user, after), ensure_ascii=False)
        assert leaked_tags(home, docs, Place("slack", "D0HOME", user).allows) == []

    moved = move_documents(running, docs_dir, docs)
    assert sweep(running, slack, connector, moved, places, core=True) == {}
    assert sweep(running, slack, connector, moved, places, questions=one_per_document(moved)) == {}


@pytest.mark.parametrize("bot", ["milvus"], indirect=True)
def test_on_milvus_no_place_sees_a_document_outside_its_scope_either(bot):
    """The same questions through the core on the Milvus backend (its filter expressions), before and after
    the reindex that moves documents."""
    running, slack, connector, docs_dir = bot
    docs = documents()
    places = SLACK_PLACES  # every kind of place and reader; the core is the same for Teams
    assert sweep(running, slack, connector, docs, places, core=True) == {}
    assert answered_tags(running, docs) == {d.tag for d in docs}
    moved = move_documents(running, docs_dir, docs)
    assert sweep(running, slack, connector, moved, places, core=True) == {}


def test_the_teams_review_shows_an_admin_only_what_their_scope_may_read_and_counts_the_rest(bot):
    running, _, connector, _ = bot
    docs = documents()
    services = running.services
    chunks = services.documents()
    version = services.index.manifest().version
    for doc in docs:  # a down-voted answer citing each document, and a flag on its passage
        chunk = chunks[doc.rel]
        cited = CitedChunk(chunk.id, chunk.file, f"{chunk.title} · {doc.tag}", chunk.text, chunk.title, chunk.url)
        answer_id = services.feedback.record_answer(doc.sentences[0], doc.sentences[1], [cited], version,
                                                    "a:member-chat", MEMBER, platform="teams")
        services.feedback.vote(answer_id, MEMBER, "answer", -1, "a:member-chat", platform="teams")
        services.feedback.vote(answer_id, MEMBER, "citation:1", -1, "a:member-chat", platform="teams")

    reader = Place("teams", "a:admin-chat", ADMIN)  # dm: hr, eng, public; on no access list
    hidden = [d for d in docs if not reader.allows(d)]
    assert {d.rel for d in hidden} == {"hr/salaries.md", "eng/incidents.txt", "finance/budget.md",
                                       "finance/invoices.md", "finance/expenses.md"}
    post(running, activity(connector, "review", conversation="a:admin-chat", user=ADMIN))
    card = json.dumps(wait_for(lambda: connector.messages_in("a:admin-chat"))[0].body, ensure_ascii=False)
    assert leaked_tags(card, docs, reader.allows) == []
    assert all(d.tag in card for d in docs if reader.allows(d)), "what the admin may read is listed"
    assert f"{len(hidden)} more down-voted answers outside your scope" in card
    assert f"{len(hidden)} more flagged passages outside your scope" in card
    for doc in hidden:  # a hand-made "Show passage" of a hidden one opens nothing
        shown = post(running, card_action(connector, "review/show", {"chunk": chunks[doc.rel].id})).text
        assert doc.tag not in shown and "outside your scope" in shown
        confirmed = post(running, card_action(connector, "review/confirm", {"chunk": chunks[doc.rel].id})).text
        assert doc.tag not in confirmed and "That passage is not in your review, so nothing changed." in confirmed
    assert services.feedback.verdicts() == [], "nothing outside the admin's scope was confirmed"


def move_documents(running, docs_dir, docs: list[Document]) -> list[Document]:
    """Reindex after moving documents between collections (an access-listed one with its sidecar)."""
    moves = {"hr/hiring.md": "finance/hiring.md", "finance/budget.md": "budget.md",
             "eng/incidents.txt": "hr/incidents.txt"}
    for old, new in moves.items():
        (docs_dir / new).parent.mkdir(parents=True, exist_ok=True)
        shutil.move(docs_dir / old, docs_dir / new)
        if (docs_dir / f"{old}.access").exists():
            shutil.move(docs_dir / f"{old}.access", docs_dir / f"{new}.access")
    report = running.kb.refresh([docs_dir])
    assert {"finance/hiring.md", "budget.md", "hr/incidents.txt"} <= set(report.added)
    return [replace(d, rel=moves.get(d.rel, d.rel)) for d in docs]
