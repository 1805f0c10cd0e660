"""Composition root: the knowledge base (rag.knowledge_base) wired to the chat surfaces — the bot, its core,
scopes and the look-up of a document's readers on the chat platforms.

Components are imported where they are built, so a command loads only what it uses (`--help` and
`status` need neither the embedder nor FAISS, the Slack SDK or the model clients).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rag.knowledge_base import KnowledgeBase, make_pipeline, secret_value

if TYPE_CHECKING:
    from slack_bolt.async_app import AsyncApp

    from bot.core.assistant import Assistant
    from bot.core.config import ChatSettings
    from bot.core.credentials import CredentialStatus
    from bot.core.scopes import GroupDirectory, ScopeResolver
    from bot.core.services import CoreServices
    from bot.core.sources import SourceDesk
    from bot.server import Operations, Routes
    from bot.slack.config import SlackSettings
    from bot.slack.services import SlackServices
    from bot.teams.app import TeamsSurface
    from bot.teams.config import TeamsSettings
    from rag.index.builder import IndexProgress, IndexReport
    from rag.answering.pipeline import AnswerPipeline
    from rag.sources.readers import ReaderResolver
    from rag.sources.sync import SyncReport
    from rag.types import Chunk, Scope

_log = logging.getLogger(__name__)


@dataclass
class Bot:
    """The chat surfaces that are configured, around one shared core."""

    services: CoreServices
    assistant: Assistant  # the one way into `services` that both surfaces are given
    operations: Operations
    slack_app: AsyncApp | None = None
    slack_services: SlackServices | None = None
    teams: TeamsSurface | None = None

    def routes(self, slack_events: bool = True) -> list[Routes]:
        """The surfaces' endpoints; without `slack_events` (Socket Mode) Slack has none on HTTP."""
        from bot.slack.app import add_routes

        surfaces: list[Routes] = []
        if self.slack_app is not None and slack_events:
            app, settings = self.slack_app, self.slack_services.settings
            acked = self.services.metrics.acked if self.services.metrics is not None else None
            surfaces.append(lambda application: add_routes(application, app, settings, acked))
        if self.teams is not None:
            surfaces.append(self.teams.add_routes)
        return surfaces

    def web_app(self, slack_events: bool = True):
        from bot.server import web_app

        return web_app(self.operations, self.routes(slack_events))


def make_bot(kb: KnowledgeBase, slack: SlackSettings | None = None, teams: TeamsSettings | None = None,
             chat: ChatSettings | None = None, teams_connections=None, graph_token=None,
             credentials: CredentialStatus | None = None) -> Bot:
    """The configured chat surfaces (Slack, Teams or both) on one core; `teams_connections` replaces the
    SDK's MSAL token providers (`serve` passes those it checked; tests, stand-ins) and `graph_token` the
    Microsoft Graph tokens they would issue; `credentials`, what /ready says of each surface's."""
    from ai_employee.operations import Served, make_operations
    from bot.core.assistant import Assistant
    from bot.core.config import ChatSettings
    from rag.storage import unwritable

    chat = chat or ChatSettings()
    scopes = make_scopes(kb, chat)  # first: a wrong scopes file stops the start before anything is loaded
    pipeline = make_pipeline(kb)
    services = make_core(kb, chat, pipeline, scopes)
    stores = [kb.feedback, kb.work_cache, *([scopes.overrides] if scopes.overrides is not None else [])]
    served = Served(kb.retriever, kb.store.current_version, pipeline.cache, bool(kb.settings.redis_url), kb.versions,
                    tuple(source.every for source in kb.sources), lambda: unwritable(stores, kb.settings.data_dir))
    bot = Bot(services, Assistant(services), make_operations(served, services, credentials))
    if slack is not None:
        from bot.slack.admins import SlackAdmins, admin_teller
        from bot.slack.app import create_app
        from bot.slack.services import SlackServices

        bot.slack_services = SlackServices(assistant=bot.assistant, settings=slack, admins=SlackAdmins(slack.admins))
        bot.slack_app = create_app(bot.slack_services)
        services.tellers["slack"] = admin_teller(bot.slack_app.client)
        services.scopes.use_groups("slack", slack_groups(bot.slack_app.client, chat))
    if teams is not None:
        from bot.core.admins import AdminCheck
        from bot.teams.app import TeamsSurface, msal_connections

        bot.teams = TeamsSurface(bot.assistant, teams, teams_connections or msal_connections(teams),
                                 AdminCheck(teams.admins))
        services.tellers["teams"] = bot.teams.teller()
        if teams.groups:
            services.scopes.use_groups("teams", teams_groups(bot.teams.connections, teams, chat, graph_token))
    kb.readers = make_readers(kb, slack, teams, bot.teams.connections if bot.teams else None, graph_token)
    return bot


def environment_readers(kb: KnowledgeBase) -> ReaderResolver | None:
    """A knowledge base's `find_readers` outside `serve` (`ai-employee sources sync`): the look-ups on the chat
    surfaces the environment configures; `make_bot` sets the served surfaces' own."""
    from bot.slack.config import SlackSettings
    from bot.teams.config import TeamsSettings

    return make_readers(kb, SlackSettings(), TeamsSettings())


def make_readers(kb: KnowledgeBase, slack: SlackSettings | None, teams: TeamsSettings | None, connections=None,
                 graph_token=None) -> ReaderResolver | None:
    """The lookups that name a source's restricted documents' readers in chat ids by their email: Slack's
    users when a bot token is set, Entra's through Microsoft Graph when AIE_TEAMS_GROUPS is on (the tokens
    of the bot's app from the SDK's MSAL `connections`, unless `graph_token` gives them). None without
    either: a document's readers named by email are then left out (its list keeps only chat ids, such as
    the chat groups the sources file maps a wiki group to, else it is served to nobody)."""
    from rag.sources.people import EntraPeople, SlackPeople
    from rag.sources.readers import ReaderResolver, ResolutionCache

    surfaces: list = []
    if slack is not None and slack.slack_bot_token:
        surfaces.append(SlackPeople(secret_value(slack.slack_bot_token), api_url=slack.api_url))
    if teams is not None and teams.groups and (graph_token or connections or teams.client_id):
        from bot.teams.groups import msal_token

        if graph_token is None and connections is None:
            from bot.teams.app import msal_connections

            connections = msal_connections(teams)
        surfaces.append(EntraPeople(_blocking(graph_token or msal_token(connections)), graph_url=teams.graph_url))
    if not surfaces:
        return None
    return ReaderResolver(surfaces, ResolutionCache(kb.sources_dir / "readers.json"))


def _blocking(token: Callable[[], Awaitable[str]]) -> Callable[[], str]:
    """An async token provider called from a sync's thread: run on an event loop of its own."""
    def get() -> str:
        with ThreadPoolExecutor(1) as pool:
            return pool.submit(asyncio.run, token()).result()

    return get


def make_scopes(kb: KnowledgeBase, chat: ChatSettings) -> ScopeResolver:
    """What each place answers from: AIE_SCOPES_FILE (ScopesFileError when it is wrong) and the changes
    admins made from chat, kept beside the index (replicas share them)."""
    from bot.core.scopes import ScopeOverrides, ScopeResolver, load_scopes

    file = load_scopes(chat.scopes_file)
    return ScopeResolver(file, ScopeOverrides(chat.scopes_db or kb.settings.data_dir / "scopes.sqlite3"))


def slack_groups(client, chat: ChatSettings) -> GroupDirectory:
    """Slack user groups through `client` (an AsyncWebClient), kept for AIE_GROUPS_TTL."""
    from bot.core.scopes import GroupDirectory
    from bot.slack.groups import user_groups

    return GroupDirectory(lambda: user_groups(client), ttl=chat.groups_ttl, name="Slack user groups")


def teams_groups(connections, teams: TeamsSettings, chat: ChatSettings, token=None) -> GroupDirectory:
    """Entra groups from Microsoft Graph (AIE_TEAMS_GRAPH_URL), with tokens of the bot's own app from the SDK's
    MSAL `connections` unless `token` gives them; kept for AIE_GROUPS_TTL."""
    from bot.teams.groups import GraphGroupDirectory, msal_token

    return GraphGroupDirectory(token or msal_token(connections), graph_url=teams.graph_url, ttl=chat.groups_ttl)


async def place_scope(kb: KnowledgeBase, platform: str, place: str, user: str, chat: ChatSettings | None = None,
                      slack: SlackSettings | None = None, teams: TeamsSettings | None = None) -> Scope:
    """What the bot would answer `user` from in `place`: the same resolver, and the user's groups as the bot
    looks them up — Slack's when Slack credentials are set, Entra's when AIE_TEAMS_GROUPS is on (else the
    user's own id alone)."""
    from bot.core.config import ChatSettings

    chat = chat or ChatSettings()
    scopes = make_scopes(kb, chat)
    if platform == "teams":
        from bot.teams.conversation import is_personal_chat, place_in

        if teams is not None and teams.groups:
            from bot.teams.app import msal_connections

            scopes.use_groups("teams", teams_groups(msal_connections(teams), teams, chat))
        place = place_in(place)  # a reply chain (19:…;messageid=…) answers with its channel's scope
        return await scopes.resolve(platform, place, user.lower(), is_personal_chat(place), also=(user,))
    from bot.slack.places import is_direct

    if slack is not None and slack.slack_bot_token:
        from slack_sdk.web.async_client import AsyncWebClient

        token = slack.slack_bot_token.get_secret_value()
        scopes.use_groups("slack", slack_groups(AsyncWebClient(token, base_url=slack.api_url), chat))
    return await scopes.resolve(platform, place, user, is_direct(place))


def _live_passages(kb: KnowledgeBase) -> tuple[str, Iterable[Chunk]]:
    """The live index's version and every passage (for the documents chat may list or show)."""
    snapshot = kb.retriever.snapshot
    return snapshot.version, snapshot.chunks


def public_examples(kb: KnowledgeBase) -> tuple[str, ...]:
    """Example questions about the live index's documents that anyone in the organisation may read (the
    public collection, no access list): what a Teams app package, listed to everyone, may suggest. None
    without an index, or on Milvus (reading it would start Milvus to write a zip)."""
    from bot.core.examples import example_questions
    from bot.core.scopes.documents import readable_manifest
    from rag.index.snapshot import IndexNotFoundError, SnapshotStore, read_chunks, read_manifest
    from rag.types import PUBLIC, Scope

    if kb.settings.vector_store != "faiss":
        return ()
    try:
        path = SnapshotStore(kb.index_dir).current_path()
        manifest = read_manifest(path)
        documents: dict[str, Chunk] = {}
        for chunk in read_chunks(path):
            documents.setdefault(chunk.file, chunk)
    except (IndexNotFoundError, OSError, ValueError):
        return ()
    everyone = Scope(collections=frozenset({PUBLIC}), readers=frozenset())
    return tuple(example_questions(readable_manifest(manifest, documents, everyone)))


def make_core(kb: KnowledgeBase, chat: ChatSettings | None = None, pipeline: AnswerPipeline | None = None,
              scopes: ScopeResolver | None = None) -> CoreServices:
    """The shared core around `pipeline` and `scopes` (both built from the settings when not given)."""
    from bot.core.answering import Answerer
    from bot.core.config import ChatSettings
    from bot.core.conversation_state import ConversationState
    from bot.core.deliveries import DeliveryMarks
    from bot.core.memory import ConversationMemory
    from bot.core.metrics import Metrics
    from bot.core.reindex import NoDocumentFolders, Reindexer, ReindexRun
    from bot.core.scopes.documents import Catalog
    from bot.core.services import CoreServices, IndexInfo
    from bot.core.sources import SyncRequest, requester
    from cache import make_state_store

    chat = chat or ChatSettings()
    scopes = scopes or make_scopes(kb, chat)  # first: a wrong scopes file stops the start before anything is loaded
    pipeline = pipeline or make_pipeline(kb)
    configured = kb.docs_paths
    metrics = Metrics()

    def refresh(progress: Callable[[IndexProgress], None]) -> IndexReport:
        run = reindexer.current
        by = f"{run.by} ({run.platform})" if run and run.by else "a chat command"
        if kb.store.current_version():
            return kb.refresh(None, None, progress, by)
        if not configured:
            raise NoDocumentFolders("no index yet and AIE_DOCS_PATHS is not set")
        return kb.refresh(configured, None, progress, by)

    def live() -> Callable[[str], bool] | None:
        """A test of whether a chunk id is in the live index (loads the answers' snapshot: call off the loop)."""
        try:
            return kb.retriever.snapshot.by_id.__contains__
        except Exception:  # noqa: BLE001 - no index, or one the embedder cannot search: cannot tell
            return None

    def finished(run: ReindexRun) -> None:
        metrics.reindexed((run.finished or run.started) - run.started, run.ok)
        metrics.synced(run.synced)

    desk = source_desk(kb)
    sync = None
    if desk is not None:
        metrics.observe_sources(desk.rows)

        def sync(request: SyncRequest | None, progress: Callable[[IndexProgress], None]) -> SyncReport:
            run = reindexer.current
            by = requester(run.by, run.platform) if run and run.by else ""
            request = request or SyncRequest()
            report = kb.sync(list(request.names) or None, allow_mass_delete=request.allow_mass_delete, by=by,
                             progress=progress)
            if by:  # the admin who asked reads the report: its failures are told
                desk.told([name for name, outcome in report.sources.items() if not outcome.ok])
            return report

    reindexer = Reindexer(refresh, lambda: kb.retriever.snapshot, finished=finished, sync=sync)
    kb.feedback.on_vote = metrics.voted
    metrics.observe(pipeline.cache, lambda: _served(kb))
    state_store = make_state_store(secret_value(kb.settings.redis_url))  # never evicted by the answer cache
    conversation_state = ConversationState(state_store)
    return CoreServices(
        answerer=Answerer(pipeline, kb.feedback, max_concurrent=chat.max_concurrent_answers, metrics=metrics),
        feedback=kb.feedback,
        reindexer=reindexer,
        deliveries=DeliveryMarks(state_store),
        conversation_state=conversation_state,
        adjuster=kb.adjuster,  # the one the pipeline demotes with
        scopes=scopes,
        memory=ConversationMemory(conversation_state),
        index=IndexInfo(kb.store.current_manifest, live, Catalog(lambda: _live_passages(kb)).documents),
        metrics=metrics,
        sources=desk,
    )


def source_desk(kb: KnowledgeBase) -> SourceDesk | None:
    """The declared sources for chat (None without AIE_SOURCES_FILE); SourcesFileError when the file is wrong."""
    if not kb.sources:
        return None
    from bot.core.sources import SourceDesk
    from rag.sources.state import StateStore

    return SourceDesk(kb.sources, StateStore(kb.sources_dir))


def _served(kb: KnowledgeBase) -> tuple[str, int] | None:
    """The index version this process answers from and its passage count (None before it loaded one)."""
    snapshot = kb.retriever.loaded
    return (snapshot.version, snapshot.manifest.chunk_count) if snapshot is not None else None
