"""Chat models behind OpenAI-compatible APIs (vLLM, `swift deploy`, llama.cpp, Ollama): streaming,
deadlines, Qwen3 thinking turned off, and failures turned into one clear error type.

The OpenAI SDK and httpx (about half a second to import) are imported when a model is configured, not with
this module: the extractive default never loads them."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from rag.safety.redaction import redact

if TYPE_CHECKING:
    import openai

FailureKind = Literal["timeout", "unavailable", "bad_response", "stream_broken"]


class ModelError(RuntimeError):
    """A model call failed; `kind` says how, the message says which model and why."""

    def __init__(self, kind: FailureKind, message: str) -> None:
        super().__init__(message)
        self.kind = kind


@dataclass(frozen=True)
class Endpoint:
    """One model role: where it is served, what it is called, how long to wait."""

    base_url: str
    model: str
    api_key: str | None = field(default=None, repr=False)
    timeout: float = 60.0  # per read; the whole answer may take longer while tokens keep coming
    first_token_timeout: float = 20.0
    max_retries: int = 1

    def __post_init__(self) -> None:
        if not self.base_url or not self.model:
            raise ValueError("a model endpoint needs both a base URL and a model name")
        if self.timeout <= 0 or self.first_token_timeout <= 0:
            raise ValueError("timeouts must be positive")


class _ThinkFilter:
    """Drops `<think>…</think>` blocks from a stream (Qwen3 may emit an empty one even when told not to)."""

    _OPEN, _CLOSE = "<think>", "</think>"

    def __init__(self) -> None:
        self._buffer = ""
        self._inside = False
        self._started = False

    def feed(self, delta: str) -> str:
        self._buffer += delta
        out = []
        while self._buffer:
            if self._inside:
                end = self._buffer.find(self._CLOSE)
                if end < 0:
                    self._buffer = self._buffer[-len(self._CLOSE) :]
                    break
                self._buffer = self._buffer[end + len(self._CLOSE) :].lstrip("\n")
                self._inside = False
                continue
            start = self._buffer.find(self._OPEN)
            if start >= 0:
                out.append(self._buffer[:start])
                self._buffer = self._buffer[start + len(self._OPEN) :]
                self._inside = True
                continue
            keep = _partial_suffix(self._buffer, self._OPEN)
            out.append(self._buffer[: len(self._buffer) - keep])
            self._buffer = self._buffer[len(self._buffer) - keep :]
            break
        text = "".join(out)
        if not self._started:  # no leading blank lines before the answer proper
            text = text.lstrip()
            self._started = bool(text)
        return text

    def flush(self) -> str:
        text, self._buffer = ("" if self._inside else self._buffer), ""
        return text


def _partial_suffix(text: str, tag: str) -> int:
    for size in range(min(len(tag) - 1, len(text)), 0, -1):
        if text.endswith(tag[:size]):
            return size
    return 0


_THINK_BLOCK = re.compile(r"<think>.*?</think>\s*", re.DOTALL)


class ChatModel:
    def __init__(self, endpoint: Endpoint, *, disable_thinking: bool = True) -> None:
        import httpx
        import openai

        self.endpoint = endpoint
        self.disable_thinking = disable_thinking
        self._client = openai.AsyncOpenAI(
            base_url=endpoint.base_url,
            api_key=endpoint.api_key or "not-needed",
            timeout=httpx.Timeout(endpoint.timeout, connect=min(endpoint.timeout, 10.0)),
            max_retries=endpoint.max_retries,
        )
        # The SDK imports its chat types on first use (about a second): now, not on the event loop.
        _ = self._client.chat.completions

    @property
    def name(self) -> str:
        return self.endpoint.model

    def _request(self, messages: list[dict[str, str]]) -> tuple[list[dict[str, str]], dict[str, Any]]:
        extra: dict[str, Any] = {}
        if self.disable_thinking:
            # vLLM, SGLang and llama-server honour the template switch; others ignore the field.
            extra["chat_template_kwargs"] = {"enable_thinking": False}
            if "qwen3" in self.endpoint.model.lower():
                # The soft switch reaches servers that render templates themselves (ms-swift).
                messages = [*messages[:-1], {**messages[-1], "content": messages[-1]["content"] + "\n/no_think"}]
        return messages, extra

    async def stream(
        self, messages: list[dict[str, str]], *, max_tokens: int = 800, temperature: float = 0.1
    ) -> AsyncIterator[str]:
        """Text deltas as the model produces them; closing the iterator closes the HTTP stream."""
        import httpx
        import openai

        messages, extra = self._request(messages)
        try:
            stream = await asyncio.wait_for(
                self._client.chat.completions.create(
                    model=self.endpoint.model, messages=messages, stream=True,
                    max_tokens=max_tokens, temperature=temperature, extra_body=extra or None,
                ),
                timeout=self.endpoint.first_token_timeout,
            )
        except (asyncio.TimeoutError, openai.APITimeoutError):
            raise self._error("timeout", f"no response within {self.endpoint.first_token_timeout:.0f} s") from None
        except openai.APIError as exc:
            raise self._translate(exc) from exc
        think = _ThinkFilter()
        chunks = stream.__aiter__()
        first = True
        finished = False
        try:
            while True:
                try:
                    wait = self.endpoint.first_token_timeout if first else self.endpoint.timeout
                    chunk = await asyncio.wait_for(chunks.__anext__(), timeout=wait)
                except StopAsyncIteration:
                    break
                except asyncio.TimeoutError:
                    what = "first token" if first else "next token"
                    raise self._error("timeout", f"no {what} within {wait:.0f} s") from None
                except openai.APIError as exc:
                    raise self._translate(exc) from exc
                except (httpx.HTTPError, ValueError) as exc:  # cut connection, malformed SSE/JSON
                    raise self._error("stream_broken", f"the answer stream broke off ({type(exc).__name__})") from exc
                if not chunk.choices:
                    continue
                finished = finished or chunk.choices[0].finish_reason is not None
                delta = chunk.choices[0].delta.content or ""
                text = think.feed(delta)
                if text:
                    first = False
                    yield text
            rest = think.flush()
            if rest:
                yield rest
            if not finished:  # every OpenAI-compatible server ends a complete answer with a finish reason
                raise self._error("stream_broken", "the answer stream ended before the model finished")
        finally:
            await stream.close()

    async def complete(self, messages: list[dict[str, str]], *, max_tokens: int = 200, temperature: float = 0.0) -> str:
        """One non-streamed reply (used for query rewriting)."""
        import httpx
        import openai

        messages, extra = self._request(messages)
        try:
            response = await asyncio.wait_for(
                self._client.chat.completions.create(
                    model=self.endpoint.model, messages=messages, max_tokens=max_tokens,
                    temperature=temperature, extra_body=extra or None,
                ),
                timeout=self.endpoint.timeout,
            )
        except (asyncio.TimeoutError, openai.APITimeoutError):
            raise self._error("timeout", f"no reply within {self.endpoint.timeout:.0f} s") from None
        except openai.APIError as exc:
            raise self._translate(exc) from exc
        except (httpx.HTTPError, ValueError) as exc:
            raise self._error("bad_response", f"unreadable reply ({type(exc).__name__})") from exc
        if not response.choices or response.choices[0].message.content is None:
            raise self._error("bad_response", "the reply had no text")
        return _THINK_BLOCK.sub("", response.choices[0].message.content).strip()

    def _error(self, kind: FailureKind, detail: str) -> ModelError:
        # (what the server answered may quote the key it was sent, as a URL may hold a password)
        return ModelError(kind, redact(f"model {self.endpoint.model!r} at {self.endpoint.base_url}: {detail}",
                                       [self.endpoint.api_key]))

    def _translate(self, exc: openai.APIError) -> ModelError:
        import openai

        if isinstance(exc, openai.APITimeoutError):
            return self._error("timeout", "timed out")
        if isinstance(exc, openai.APIConnectionError):
            return self._error("unavailable", "cannot connect")
        if isinstance(exc, openai.APIStatusError):
            return self._error("unavailable", f"HTTP {exc.status_code}: {_short(exc.message)}")
        return self._error("bad_response", _short(str(exc)))

    async def aclose(self) -> None:
        await self._client.close()


def _short(text: str, limit: int = 200) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
