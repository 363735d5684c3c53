"""SSRF: only globally routable addresses are fetched (100.64/10 and every other special
range refused, on every resolved address, IPv4-mapped IPv6 and redirects included).
Host: a loopback daemon answers only its own address and port (DNS rebinding)."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .edge_live import daemons


@pytest.fixture
def live_factory(tmp_path: Path) -> Iterator[Any]:
    yield from daemons(tmp_path)

SPECIAL = ["100.64.0.1", "100.127.255.254", "127.0.0.1", "10.1.2.3", "172.16.0.1",
           "192.168.1.1", "169.254.169.254", "0.0.0.0", "192.0.2.10", "198.18.0.1",
           "198.51.100.7", "203.0.113.9", "240.0.0.1", "255.255.255.255", "224.0.0.251",
           "::1", "fe80::1", "fc00::1", "2001:db8::1", "::ffff:100.64.0.1",
           "::ffff:127.0.0.1", "::ffff:10.0.0.1", "64:ff9b::a00:1", "2002:a00:1::1",
           "100::1"]
PUBLIC = ["8.8.8.8", "1.1.1.1", "2606:4700:4700::1111", "::ffff:8.8.8.8", "93.184.215.14"]


@pytest.mark.parametrize("ip", SPECIAL)
def test_special_addresses_are_refused(ip: str) -> None:
    from opencortex.guard import Action, Guard
    from opencortex.guard.core import private_host
    from opencortex.skills.web_http import WebError, check_url

    assert private_host(ip), ip
    host = f"[{ip}]" if ":" in ip else ip
    with pytest.raises(WebError, match="private-network"):
        check_url(f"http://{host}/x")
    d = Guard().check(Action("web", {"url": f"https://{host}/"}, origin="web"))
    assert d.denied and "private-network" in d.reason


@pytest.mark.parametrize("ip", PUBLIC)
def test_public_addresses_pass(ip: str) -> None:
    from opencortex.guard.core import private_host

    assert not private_host(ip)


@pytest.mark.parametrize("answer", [["93.184.215.14", "100.64.0.1"], ["::ffff:100.64.0.1"],
                                    ["100.100.100.100"]])
def test_every_resolved_address_is_checked(answer: list[str],
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """A public-looking name whose DNS answer holds one special address is refused at
    connect time, before any connection is made."""
    from opencortex.skills import web_http

    connected: list[Any] = []

    def fake_getaddrinfo(host: str, port: Any, *a: Any, **kw: Any) -> list[Any]:
        assert host == "cdn.example"
        return [(socket.AF_INET6 if ":" in ip else socket.AF_INET, socket.SOCK_STREAM, 6, "",
                 (ip, port)) for ip in answer]

    monkeypatch.setattr(web_http.socket, "getaddrinfo", fake_getaddrinfo)
    monkeypatch.setattr(web_http.socket, "socket",
                        lambda *a, **k: connected.append(a) or pytest.fail("connected"))
    with pytest.raises(web_http.WebError, match="resolves to a local or private"):
        web_http._connect(("cdn.example", 80))
    assert not connected


def test_redirects_are_checked_again() -> None:
    import urllib.request

    from opencortex.skills.web_http import WebError, _Redirects

    req = urllib.request.Request("https://example.com/start")
    for target in ("http://100.64.0.1/", "http://[::ffff:100.64.0.1]/",
                   "http://169.254.169.254/latest/meta-data"):
        with pytest.raises(WebError):
            _Redirects(False).redirect_request(req, None, 302, "Found", {}, target)


# -- Host header -----------------------------------------------------------------------------
def _get(live: Any, host: str | None, path: str = "/v1/approvals") -> tuple[int, Any]:
    st, body, _ = live.request("GET", path, headers={"Host": host} if host else None)
    return st, body


def test_dns_rebinding_host_is_refused(memex: Path, live_factory: Any) -> None:
    live = live_factory(memex)
    p = live.port
    for host in (f"127.0.0.1:{p}", f"localhost:{p}", f"[::1]:{p}", f"LOCALHOST:{p}"):
        assert _get(live, host)[0] == 200, host
    for host in (f"evil.example:{p}", "evil.example", f"127.0.0.1:{p + 1}", "127.0.0.1",
                 f"localhost.evil.example:{p}", f"127.0.0.1.nip.io:{p}", f"[::1]:{p}x"):
        for path in ("/v1/approvals", "/healthz", "/v1/search?q=caching"):
            st, body = _get(live, host, path)
            assert st == 421, (host, path, st, body)
            assert "not this daemon" in body["error"] and "--allow-host" in body["error"]


def test_missing_host_is_refused(memex: Path, live_factory: Any) -> None:
    live = live_factory(memex)
    with socket.create_connection(("127.0.0.1", live.port), timeout=10) as s:
        s.sendall(b"GET /healthz HTTP/1.0\r\n\r\n")
        data = b""
        while chunk := s.recv(4096):
            data += chunk
    assert data.startswith(b"HTTP/1.1 421"), data[:200]


def test_allowed_host_names(memex: Path, live_factory: Any) -> None:
    live = live_factory(memex, allowed_hosts=("notes.lan", "tunnel.example:443"))
    p = live.port
    assert _get(live, f"notes.lan:{p}")[0] == 200
    assert _get(live, "tunnel.example:443")[0] == 200
    assert _get(live, f"tunnel.example:{p}")[0] == 421
    assert _get(live, f"other.lan:{p}")[0] == 421


def test_serve_cli_has_allow_host() -> None:
    from click.testing import CliRunner

    from opencortex.cli.serve_cmds import serve

    out = CliRunner().invoke(serve, ["--help"]).output
    assert "--allow-host" in out
