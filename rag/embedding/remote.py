"""Embeddings from an OpenAI-compatible `/v1/embeddings` server (vLLM, `swift deploy`, llama.cpp, Ollama)."""

from __future__ import annotations

import logging

import numpy as np
import openai

from rag.embedding.base import EmbeddingError, normalize_rows
from rag.safety.redaction import redact

_log = logging.getLogger(__name__)

QWEN3_QUERY_TEMPLATE = (
    "Instruct: Given a question, retrieve passages from the company knowledge base that answer it\nQuery:{text}"
)
E5_QUERY_TEMPLATE = "query: {text}"
E5_PASSAGE_TEMPLATE = "passage: {text}"


def default_templates(model: str) -> tuple[str, str]:
    """(query, passage) templates a model family was trained with."""
    name = model.lower()
    if "e5" in name:
        return E5_QUERY_TEMPLATE, E5_PASSAGE_TEMPLATE
    if "qwen3-embedding" in name or "qwen3_embedding" in name:
        return QWEN3_QUERY_TEMPLATE, "{text}"
    return "{text}", "{text}"


class OpenAIEmbedder:
    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str = "not-needed",
        *,
        timeout: float = 30.0,
        max_retries: int = 3,
        batch_size: int = 32,
        dimensions: int | None = None,
        query_template: str | None = None,
        passage_template: str | None = None,
    ) -> None:
        if not base_url:
            raise ValueError("base_url is required for a remote embedder")
        if not model:
            raise ValueError("model is required for a remote embedder")
        default_query, default_passage = default_templates(model)
        self.query_template = query_template or default_query
        self.passage_template = passage_template or default_passage
        for template in (self.query_template, self.passage_template):
            if "{text}" not in template:
                raise ValueError(f"embedding template must contain {{text}}: {template!r}")
        self._client = openai.OpenAI(
            base_url=base_url, api_key=api_key or "not-needed", timeout=timeout, max_retries=max_retries
        )
        self._model = model
        self._batch_size = batch_size
        self._dimensions = dimensions
        self._dim: int | None = dimensions

    @property
    def model_id(self) -> str:
        suffix = f"@{self._dimensions}d" if self._dimensions else ""
        return f"openai:{self._model}{suffix}|{self.passage_template}"

    @property
    def dim(self) -> int:
        if self._dim is None:
            self._dim = int(self._request(["dimension probe"]).shape[1])
        return self._dim

    @property
    def batch_size(self) -> int:
        return self._batch_size

    def embed_passages(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        parts = [
            self._request([self.passage_template.format(text=t) for t in texts[i : i + self._batch_size]])
            for i in range(0, len(texts), self._batch_size)
        ]
        return np.vstack(parts)

    def embed_query(self, text: str) -> np.ndarray:
        return self._request([self.query_template.format(text=text)])[0]

    def embed_queries(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return self._request([self.query_template.format(text=t) for t in texts])

    def _request(self, inputs: list[str]) -> np.ndarray:
        extra = {"dimensions": self._dimensions} if self._dimensions else {}
        try:
            response = self._client.embeddings.create(
                model=self._model, input=inputs, encoding_format="float", **extra
            )
        except openai.APIError as exc:
            raise EmbeddingError(redact(f"embedding server failed for model {self._model!r}: {exc}",
                                        [self._client.api_key])) from exc
        data = sorted(response.data, key=lambda item: item.index)
        if len(data) != len(inputs):
            raise EmbeddingError(f"embedding server returned {len(data)} vectors for {len(inputs)} inputs")
        vectors = np.asarray([item.embedding for item in data], dtype=np.float32)
        if vectors.ndim != 2 or vectors.shape[1] == 0:
            raise EmbeddingError("embedding server returned malformed vectors")
        if self._dim is not None and vectors.shape[1] != self._dim:
            raise EmbeddingError(f"embedding server returned dimension {vectors.shape[1]}, expected {self._dim}")
        self._dim = vectors.shape[1]
        return normalize_rows(vectors)
