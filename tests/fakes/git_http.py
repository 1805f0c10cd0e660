"""A local git server over HTTP for tests: git's own server side (`git http-backend`, the CGI program git
ships) serving the bare repositories under `root`, behind HTTP Basic authentication when `token` is set.

It implements git's smart HTTP protocol as clone, fetch and ls-remote use it:
`GET /<repo>/info/refs?service=git-upload-pack` and `POST /<repo>/git-upload-pack` (and receive-pack for
pushes, which a test makes with the same credentials). A request without the right `Authorization:
Basic base64(user:token)` header gets 401 with `WWW-Authenticate: Basic`. Every request's Authorization
header is recorded."""

from __future__ import annotations

import asyncio
import base64
import os
from pathlib import Path

from aiohttp import web

from tests.fakes.local_server import LocalServer


class GitHttpServer(LocalServer):
    name = "git http server"

    def __init__(self, root: Path, *, token: str | None = None, user: str = "x-access-token") -> None:
        super().__init__()
        self.root = root
        self.token = token
        self.user = user
        self.authorizations: list[str | None] = []

    def url(self, repo: str) -> str:
        return f"http://127.0.0.1:{self.port}/{repo}"

    @property
    def expected(self) -> str:
        return "Basic " + base64.b64encode(f"{self.user}:{self.token}".encode()).decode()

    def routes(self, app: web.Application) -> None:
        app.router.add_route("*", "/{path:.*}", self._answer)

    async def _answer(self, request: web.Request) -> web.StreamResponse:
        authorization = request.headers.get("Authorization")
        self.authorizations.append(authorization)
        if self.token is not None and authorization != self.expected:
            return web.Response(status=401, headers={"WWW-Authenticate": 'Basic realm="git"'}, text="denied\n")
        body = await request.read()
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "GIT_PROJECT_ROOT": str(self.root),
            "GIT_HTTP_EXPORT_ALL": "1", "REQUEST_METHOD": request.method, "PATH_INFO": request.path,
            "QUERY_STRING": request.query_string, "CONTENT_TYPE": request.headers.get("Content-Type", ""),
            "CONTENT_LENGTH": str(len(body)), "REMOTE_ADDR": request.remote or "127.0.0.1",
            "REMOTE_USER": self.user if self.token else "", "GIT_HTTP_RECEIVE_PACK": "true",
        }
        if request.headers.get("Git-Protocol"):
            env["GIT_PROTOCOL"] = request.headers["Git-Protocol"]
        if body[:2] == b"\x1f\x8b":  # still gzipped (aiohttp may already have decompressed it)
            env["HTTP_CONTENT_ENCODING"] = "gzip"
        process = await asyncio.create_subprocess_exec("git", "http-backend", env=env, stdin=asyncio.subprocess.PIPE,
                                                       stdout=asyncio.subprocess.PIPE)
        out, _ = await process.communicate(body)
        ends = [(out.find(mark), mark) for mark in (b"\r\n\r\n", b"\n\n") if mark in out]
        end, mark = min(ends) if ends else (len(out), b"")
        head, content = out[:end], out[end + len(mark):]
        status, headers = 200, {}
        for line in head.decode("latin-1").splitlines():
            key, _, value = line.partition(":")
            if key.lower() == "status":
                status = int(value.split()[0])
            elif key:
                headers[key.strip()] = value.strip()
        return web.Response(status=status, body=content, headers=headers)
