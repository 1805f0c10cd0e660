"""Rerankers: Qwen3-Reranker (or any cross-encoder) behind vLLM's rerank API or ms-swift's chat form.

Both return one relevance score per passage, higher is better (a probability in 0..1 for
Qwen3-Reranker with the default activation).
"""

from __future__ import annotations

import asyncio
import json
from typing import Literal, Protocol

from rag.models.chat import Endpoint, ModelError
from rag.safety.redaction import redact

QWEN3_INSTRUCTION = "Given a question from an employee, judge whether the passage from the company knowledge base answers it"
_QWEN3_SYSTEM = (
    'Judge whether the Document meets the requirements based on the Query and the Instruct provided. '
    'Note that the answer can only be "yes" or "no".'
)
RerankApi = Literal["vllm", "swift"]


class Reranker(Protocol):
    @property
    def name(self) -> str: ...

    async def scores(self, query: str, passages: list[str]) -> list[float]: ...


def qwen3_pair(query: str, passage: str, instruction: str = QWEN3_INSTRUCTION) -> tuple[str, str]:
    """The query and document strings in Qwen3-Reranker's prompt format, for servers that do not apply it."""
    head = (f"<|im_start|>system\n{_QWEN3_SYSTEM}<|im_end|>\n<|im_start|>user\n"
            f"<Instruct>: {instruction}\n<Query>: {query}\n")
    tail = f"<Document>: {passage}<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n"
    return head, tail


class _HttpReranker:
    def __init__(self, endpoint: Endpoint) -> None:
        import httpx  # here, not with the module: the default (no reranker) never loads it

        self.endpoint = endpoint
        headers = {"Authorization": f"Bearer {endpoint.api_key}"} if endpoint.api_key else {}
        self._http = httpx.AsyncClient(
            base_url=endpoint.base_url.rstrip("/") + "/", headers=headers,
            timeout=httpx.Timeout(endpoint.timeout, connect=min(endpoint.timeout, 5.0)),
        )

    @property
    def name(self) -> str:
        return self.endpoint.model

    def _error(self, kind: str, detail: str) -> ModelError:
        text = f"reranker {self.endpoint.model!r} at {self.endpoint.base_url}: {detail}"
        return ModelError(kind, redact(text, [self.endpoint.api_key]))  # type: ignore[arg-type]

    async def _post(self, path: str, payload: dict) -> dict:
        import httpx

        try:
            response = await self._http.post(path, json=payload)
        except httpx.TimeoutException:
            raise self._error("timeout", f"no reply within {self.endpoint.timeout:.0f} s") from None
        except httpx.HTTPError as exc:
            raise self._error("unavailable", f"cannot connect ({type(exc).__name__})") from None
        if response.status_code != 200:
            raise self._error("unavailable", f"HTTP {response.status_code}: {response.text[:200]}")
        try:
            return response.json()
        except json.JSONDecodeError:
            raise self._error("bad_response", "reply is not JSON") from None

    async def aclose(self) -> None:
        await self._http.aclose()


class VllmReranker(_HttpReranker):
    """`POST {base}/rerank` (vLLM, also Jina/Cohere-style servers).

    With `client_template`, query and passages are wrapped in Qwen3-Reranker's prompt here; leave it
    off when the server applies the template itself (vLLM started with `--chat-template`).
    """

    def __init__(self, endpoint: Endpoint, *, client_template: bool = False) -> None:
        super().__init__(endpoint)
        self.client_template = client_template

    async def scores(self, query: str, passages: list[str]) -> list[float]:
        if not passages:
            return []
        documents = passages
        if self.client_template:
            query, _ = qwen3_pair(query, "")
            documents = [qwen3_pair("", p)[1] for p in passages]
        data = await self._post("rerank", {"model": self.endpoint.model, "query": query, "documents": documents})
        try:
            scores = [float("nan")] * len(passages)
            for item in data["results"]:
                scores[int(item["index"])] = float(item["relevance_score"])
        except (KeyError, TypeError, ValueError, IndexError):
            raise self._error("bad_response", "unexpected rerank reply shape") from None
        if any(s != s for s in scores):  # NaN: some passage got no score
            raise self._error("bad_response", "the reply did not score every passage")
        return scores


class SwiftReranker(_HttpReranker):
    """ms-swift `swift deploy --task_type generative_reranker`: one chat completion per passage,
    the score comes back as the message content (a number or a one-element list)."""

    def __init__(self, endpoint: Endpoint, *, concurrency: int = 8, instruction: str = QWEN3_INSTRUCTION) -> None:
        super().__init__(endpoint)
        self._limit = asyncio.Semaphore(concurrency)
        self.instruction = instruction

    async def _one(self, query: str, passage: str) -> float:
        messages = [{"role": "system", "content": self.instruction}, {"role": "user", "content": query},
                    {"role": "assistant", "content": passage}]
        async with self._limit:
            data = await self._post("chat/completions", {"model": self.endpoint.model, "messages": messages})
        try:
            content = data["choices"][0]["message"]["content"]
            if isinstance(content, str):
                content = json.loads(content)
            if isinstance(content, list):
                content = content[0]
            return float(content)
        except (KeyError, IndexError, TypeError, ValueError):
            raise self._error("bad_response", "the reply held no score") from None

    async def scores(self, query: str, passages: list[str]) -> list[float]:
        return list(await asyncio.gather(*(self._one(query, p) for p in passages)))


def make_reranker(endpoint: Endpoint, api: RerankApi, client_template: bool) -> Reranker:
    if api == "vllm":
        return VllmReranker(endpoint, client_template=client_template)
    if api == "swift":
        return SwiftReranker(endpoint)
    raise ValueError(f"unknown reranker API {api!r}; use 'vllm' or 'swift'")
