"""A local Entra ID token service for tests, reached the way MSAL reaches the real one.

MSAL only talks to `https://login.microsoftonline.com` (any other authority host it first validates there),
so this fake is an HTTPS proxy for that one host: a process given `entra.env()` — `ALL_PROXY` and
`REQUESTS_CA_BUNDLE`, which the `requests` library reads and the Slack SDK does not — sends its token requests here, over TLS with a certificate from a CA made for the test. Any other host is refused.

It answers, as Entra's v2.0 endpoints do:

* `GET /common/discovery/instance` → the host's aliases (MSAL asks before it looks in its token cache);
* `GET /{tenant}/v2.0/.well-known/openid-configuration` → the tenant's endpoints; an unknown tenant → 400
  `invalid_tenant` (AADSTS90002);
* `POST /{tenant}/oauth2/v2.0/token` with `grant_type=client_credentials` → a bearer token for a registered
  client id and its secret; an unknown client id → 400 `unauthorized_client` (AADSTS700016); a wrong
  secret → 401 `invalid_client` (AADSTS7000215).

Token requests are recorded (`entra.token_requests`: client id, scope, whether the secret matched).
"""

from __future__ import annotations

import datetime
import json
import socketserver
import ssl
import tempfile
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from urllib.parse import parse_qsl

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

HOST = "login.microsoftonline.com"


@dataclass
class TokenRequest:
    tenant: str
    client_id: str
    scope: str
    secret_matched: bool


class EntraTokenService:
    def __init__(self, tenants: set[str], clients: dict[str, str]) -> None:
        """`clients`: client id → its secret, registered in every tenant of `tenants`."""
        self.tenants, self.clients = tenants, clients
        self.token_requests: list[TokenRequest] = []
        self._dir = tempfile.TemporaryDirectory(prefix="fake-entra-")
        self.ca_bundle = Path(self._dir.name) / "ca.pem"
        self._tls = _tls_context(Path(self._dir.name), self.ca_bundle)
        self._server = _Proxy(("127.0.0.1", 0), _Tunnel)
        self._server.entra = self

    @property
    def proxy_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def env(self) -> dict[str, str]:
        """What a process needs to reach this service for login.microsoftonline.com."""
        # NO_PROXY: httpx and requests honour ALL_PROXY for every scheme, local servers included.
        return {"ALL_PROXY": self.proxy_url, "NO_PROXY": "127.0.0.1,localhost", "REQUESTS_CA_BUNDLE": str(self.ca_bundle)}

    def __enter__(self) -> EntraTokenService:
        threading.Thread(target=self._server.serve_forever, name="fake-entra", daemon=True).start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._dir.cleanup()

    def answer(self, method: str, path: str, form: dict[str, str]) -> tuple[int, dict]:
        parts = path.split("?")[0].strip("/").split("/")
        if method == "GET" and parts == ["common", "discovery", "instance"]:  # MSAL's look-up of the host's aliases
            return 200, {"api-version": "1.1", "metadata": [{"preferred_network": HOST, "preferred_cache": HOST,
                                                             "aliases": [HOST, "login.windows.net"]}]}
        tenant = parts[0]
        if tenant not in self.tenants:
            return 400, _error("invalid_tenant", f"AADSTS90002: Tenant '{tenant}' not found.")
        base = f"https://{HOST}/{tenant}"
        if method == "GET" and parts[1:] == ["v2.0", ".well-known", "openid-configuration"]:
            return 200, {"issuer": f"{base}/v2.0", "token_endpoint": f"{base}/oauth2/v2.0/token",
                         "authorization_endpoint": f"{base}/oauth2/v2.0/authorize",
                         "token_endpoint_auth_methods_supported": ["client_secret_post", "private_key_jwt"]}
        if method == "POST" and parts[1:] == ["oauth2", "v2.0", "token"]:
            return self._token(tenant, form)
        return 404, _error("invalid_request", "AADSTS900561: The endpoint only accepts POST requests.")

    def _token(self, tenant: str, form: dict[str, str]) -> tuple[int, dict]:
        client_id = form.get("client_id", "")
        matched = client_id in self.clients and form.get("client_secret") == self.clients[client_id]
        self.token_requests.append(TokenRequest(tenant, client_id, form.get("scope", ""), matched))
        if form.get("grant_type") != "client_credentials":
            return 400, _error("unsupported_grant_type", "AADSTS70003: The app requested an unsupported grant type.")
        if client_id not in self.clients:
            return 400, _error("unauthorized_client", f"AADSTS700016: Application with identifier '{client_id}' "
                               f"was not found in the directory '{tenant}'.")
        if not matched:
            return 401, _error("invalid_client", "AADSTS7000215: Invalid client secret provided. Ensure the "
                               f"secret being sent in the request is the client secret value, for app '{client_id}'.")
        return 200, {"token_type": "Bearer", "expires_in": 3599, "ext_expires_in": 3599,
                     "access_token": f"fake-entra-token-for-{client_id}"}


def _error(code: str, description: str) -> dict:
    return {"error": code, "error_description": description + " Trace ID: 0000 Correlation ID: 0000",
            "error_codes": [int(description.split(":")[0].removeprefix("AADSTS"))]}


class _Proxy(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True
    entra: EntraTokenService


class _Tunnel(socketserver.StreamRequestHandler):
    """One CONNECT to login.microsoftonline.com:443, answered here over TLS; anything else is refused."""

    server: _Proxy

    def handle(self) -> None:
        method, target, *_ = self.rfile.readline(65537).decode("latin-1").split() + ["", ""]
        while self.rfile.readline(65537) not in (b"\r\n", b"\n", b""):
            pass  # the client sends nothing more before the proxy's answer
        if method != "CONNECT" or target != f"{HOST}:443":
            self.wfile.write(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            return
        self.wfile.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
        self.wfile.flush()
        tls = self.server.entra._tls.wrap_socket(self.connection, server_side=True)
        try:
            _Endpoints(tls, self.client_address, self.server)
        finally:
            tls.close()


class _Endpoints(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Proxy

    def do_GET(self) -> None:  # noqa: N802 - http.server's names
        self._answer({})

    def do_POST(self) -> None:  # noqa: N802
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0)).decode()
        self._answer(dict(parse_qsl(body)))

    def _answer(self, form: dict[str, str]) -> None:
        status, payload = self.server.entra.answer(self.command, self.path, form)
        body = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args) -> None:
        pass


def _tls_context(folder: Path, ca_bundle: Path) -> ssl.SSLContext:
    """A server context with a certificate for HOST, signed by a CA written to `ca_bundle`."""
    now = datetime.datetime.now(datetime.timezone.utc)
    ca_key, key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "fake Entra test CA")])
    ca = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name).public_key(ca_key.public_key())
          .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(days=1))
          .not_valid_after(now + datetime.timedelta(days=1))
          .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
          .sign(ca_key, hashes.SHA256()))
    cert = (x509.CertificateBuilder().subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, HOST)]))
            .issuer_name(ca_name).public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(days=1)).not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.DNSName(HOST)]), critical=False)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .sign(ca_key, hashes.SHA256()))
    ca_bundle.write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    chain = folder / "server.pem"
    chain.write_bytes(cert.public_bytes(serialization.Encoding.PEM) + key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(chain)
    return context
