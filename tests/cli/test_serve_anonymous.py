"""Teams' anonymous mode (no token checked) is for a developer's machine: `serve` keeps it on loopback unless
told otherwise, says what that means when told, and never runs it beside a bot registration."""

from __future__ import annotations

import socket

import httpx
import pytest

from tests.cli.serving import TEAMS, Served, refused, serve_env
from tests.fakes.entra import EntraTokenService

WARNING = "anyone who can reach that port can act as any Teams user, admins included"


def outside_address() -> str:
    """An address of this machine other than loopback (the route out; nothing is sent)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("192.0.2.1", 9))
        except OSError:
            pytest.skip("this machine has no address but loopback")
        address = probe.getsockname()[0]
    if address.startswith("127."):
        pytest.skip("this machine has no address but loopback")
    return address


@pytest.fixture
def anonymous(tmp_path):
    return serve_env(tmp_path / "data", **{f"{TEAMS}ANONYMOUS_ALLOWED": "true"})


def test_anonymous_mode_listens_on_loopback_only(anonymous, tmp_path):
    elsewhere = outside_address()
    with Served(anonymous, tmp_path) as served:
        assert served.get("/health").status_code == 200
        with pytest.raises(httpx.ConnectError):
            served.get("/health", host=elsewhere)
        assert f"on http://127.0.0.1:{served.port}" in served.text and WARNING not in served.text


def test_an_explicit_host_in_anonymous_mode_is_served_with_a_warning(anonymous, tmp_path):
    elsewhere = outside_address()
    with Served(anonymous, tmp_path, "--host", "0.0.0.0") as served:
        assert served.get("/health", host=elsewhere).status_code == 200
        warnings = [r for r in served.records() if WARNING in r["message"]]
        assert [(r["level"], r["logger"]) for r in warnings] == [("warning", "ai_employee.serve")]
        assert f"0.0.0.0:{served.port}" in warnings[0]["message"]


def test_anonymous_mode_with_a_client_id_does_not_start(anonymous, tmp_path):
    env = {**anonymous, f"{TEAMS}CLIENTID": "00000000-0000-4000-8000-00000000c1d0",
           f"{TEAMS}CLIENTSECRET": "a-client-secret", f"{TEAMS}TENANTID": "tenant"}
    for args in ((), ("--host", "127.0.0.1")):
        done = refused(env, tmp_path, *args)
        message = " ".join(done.stderr.split())
        assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
        assert "ANONYMOUS_ALLOWED=true" in message and "CLIENTID" in message and "unset one of them" in message


def test_a_registered_bot_still_listens_on_every_interface(tmp_path):
    client_id = "00000000-0000-4000-8000-00000000c1d0"
    with EntraTokenService({"tenant"}, {client_id: "a-client-secret"}) as entra:  # serve checks the registration
        env = serve_env(tmp_path / "data", **entra.env(), **{
            f"{TEAMS}CLIENTID": client_id, f"{TEAMS}CLIENTSECRET": "a-client-secret", f"{TEAMS}TENANTID": "tenant"})
        with Served(env, tmp_path) as served:
            assert served.get("/health", host=outside_address()).status_code == 200
            assert f"on http://0.0.0.0:{served.port}" in served.text and WARNING not in served.text
