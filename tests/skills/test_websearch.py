"""Readable fetch and SearXNG search against a local server (which needs the private-host
allowance), SSRF refusals including DNS rebinding, size/time limits, the skill's proposals."""

from __future__ import annotations

import http.server
import json
import socket
import threading
import time
from collections.abc import Iterator

import pytest

from opencortex.guard import Guard, GuardPolicy
from opencortex.memex import Memex
from opencortex.skills import websearch as ws
from opencortex.skills.base import Action, Rejection

from .conftest import ctx_for, run

# the test config: this server is on loopback, so the private-host allowance is needed
POLICY = GuardPolicy.from_config({"guard": {"web": {"allow_private_hosts": True}}})
ALLOW = POLICY.web.allow_private_hosts

PAGE = ("<html><head><title>Sourdough basics</title></head><body>"
        "<nav><a href='/'>Home</a> <a href='/about'>About</a> menu menu</nav>"
        "<article><h1>Starter care</h1>"
        + "".join(f"<p>Paragraph {i}: feed the starter at equal weights of flour and water, "
                  f"then wait until it doubles before baking.</p>" for i in range(12))
        + "</article><footer>Copyright cookie banner</footer>"
        "<script>var tracking = 'nope';</script></body></html>")


class _H(http.server.BaseHTTPRequestHandler):
    def log_message(self, *a: object) -> None:
        pass

    def _send(self, body: bytes, ctype: str, code: int = 200) -> None:
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        if self.path.startswith("/search?"):
            self.server.last_path = self.path  # type: ignore[attr-defined]
            results = [{"title": "Starter guide", "url": "https://bread.example/starter",
                        "content": "How to keep a  starter alive"},
                       {"title": "Local file", "url": "file:///etc/passwd"},
                       {"title": "Second", "url": "http://b.example/2", "content": ""}]
            self._send(json.dumps({"query": "x", "results": results}).encode(),
                       "application/json")
        elif self.path == "/page":
            self._send(PAGE.encode(), "text/html; charset=utf-8")
        elif self.path == "/plain":
            self._send(b"just text\n", "text/plain")
        elif self.path == "/binary":
            self._send(b"\x89PNG....", "image/png")
        elif self.path == "/big":
            self._send(b"<html><body><p>" + b"x" * 5000 + b"</p></body></html>", "text/html")
        elif self.path == "/slow":
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.end_headers()
            for _ in range(30):
                self.wfile.write(b"<p>slow</p>" * 10)
                self.wfile.flush()
                time.sleep(0.1)
        elif self.path == "/cred-redirect":
            self.send_response(302)
            self.send_header("Location", "http://user:pw@bread.example/")
            self.end_headers()
        elif self.path == "/redirect":
            self.send_response(302)
            self.send_header("Location", "/page")
            self.end_headers()
        else:
            self._send(b"nope", "text/plain", 404)


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    s = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _H)
    t = threading.Thread(target=s.serve_forever, daemon=True)
    t.start()
    yield f"http://127.0.0.1:{s.server_port}"
    s.shutdown()
    s.server_close()


def test_fetch_readable_main_text(server: str) -> None:
    title, text = ws.fetch_readable(server + "/page", allow_private=ALLOW)
    assert title == "Sourdough basics"
    assert "feed the starter at equal weights" in text and "Paragraph 11" in text
    assert "tracking" not in text and "<p>" not in text
    assert ws.fetch_readable(server + "/redirect", allow_private=ALLOW)[0] == title
    assert ws.fetch_readable(server + "/plain", allow_private=ALLOW) == ("", "just text")


def test_private_hosts_refused_without_allowance(server: str) -> None:
    for url in (server + "/page", "http://localhost/", "http://169.254.169.254/latest/",
                "http://[::1]/", "http://2130706433/"):
        with pytest.raises(ws.WebError, match="private-network"):
            ws.fetch_readable(url)
    with pytest.raises(ws.WebError, match="only http"):
        ws.fetch_readable("file:///etc/passwd", allow_private=True)


def test_dns_rebinding_resolved_address_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    """A public-looking name that resolves to a private address is refused at connect."""
    real = socket.getaddrinfo

    def fake(host, port, *a, **kw):  # type: ignore[no-untyped-def]
        if host == "rebind.example":
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("10.0.0.7", port))]
        return real(host, port, *a, **kw)

    monkeypatch.setattr(socket, "getaddrinfo", fake)
    with pytest.raises(ws.WebError, match=r"resolves to a local or private-network address "
                                          r"\(10\.0\.0\.7\)"):
        ws.fetch_readable("http://rebind.example/", timeout=2)


def test_redirect_targets_checked(server: str) -> None:
    with pytest.raises(ws.WebError, match="credentials"):
        ws.fetch_readable(server + "/cred-redirect", allow_private=ALLOW)


def test_limits_and_types(server: str) -> None:
    with pytest.raises(ws.WebError, match="not a web page"):
        ws.fetch_readable(server + "/binary", allow_private=ALLOW)
    _title, text = ws.fetch_readable(server + "/big", allow_private=ALLOW, max_bytes=2000)
    assert 1000 < len(text) <= 2000
    with pytest.raises(ws.WebError, match="far over"):
        ws.fetch_readable(server + "/big", allow_private=ALLOW, max_bytes=100)
    t0 = time.monotonic()
    with pytest.raises(ws.WebError, match="longer than"):
        ws.fetch_readable(server + "/slow", allow_private=ALLOW, timeout=0.5)
    assert time.monotonic() - t0 < 2.5


def test_search_searxng_json(server: str) -> None:
    res = ws.search("sourdough starter", server, allow_private=ALLOW)
    assert res == [{"title": "Starter guide", "url": "https://bread.example/starter",
                    "snippet": "How to keep a starter alive"},
                   {"title": "Second", "url": "http://b.example/2", "snippet": ""}]
    assert ws.search("q", server + "/", limit=1, allow_private=ALLOW)[0]["title"] == \
        "Starter guide"
    text = ws.format_results("sourdough starter", res)
    assert "1. Starter guide — https://bread.example/starter" in text
    with pytest.raises(ws.WebError, match="private-network"):
        ws.search("q", server)
    with pytest.raises(ws.WebError, match="not a JSON"):
        ws.search("q", server + "/page#", allow_private=ALLOW)
    assert ws.search_endpoint({"web": {"search_endpoint": "http://s:8888"}}) == "http://s:8888"


def test_skill_proposals(mx: Memex) -> None:
    sk = ws.skill()
    p, a = run(sk, ctx_for(mx, target="web", url="https://example.org/a"))
    assert p == {"action": "web", "url": "https://example.org/a"}
    assert a == Action("web", {"url": "https://example.org/a"}, origin="web")
    p, a = run(sk, ctx_for(mx, target="web", args={"query": "sqlite  wal mode"}))
    assert a == Action("websearch", {"query": "sqlite wal mode"}, origin="web")
    p, a = run(sk, ctx_for(mx, "search the web for rust ownership rules?"))
    assert a.args == {"query": "rust ownership rules"}
    assert isinstance(sk.symbolic({"action": "web", "url": "ftp://x"}, ctx_for(mx, "x")),
                      Rejection)
    assert not sk.trigger(ctx_for(mx, "caching strategies"))
    # the guard still has the last word on the web action
    d = Guard().check(Action("web", {"url": "http://127.0.0.1/"}, origin="web"))
    assert d.denied


def test_kernel_websearch_replies_with_results(mx: Memex, server: str) -> None:
    """The websearch actuator end to end: the reply lists the endpoint's results (it once
    passed the results where ``format_results`` takes the query, a TypeError on every search)."""
    from opencortex.pipeline.kernel import Kernel

    mx.settings.apply_config({"web": {"search_endpoint": server},
                              "guard": {"tools": {"websearch": "allow"}}})
    k = Kernel(mx, record_sessions=False)
    try:
        out = k.ask("search the web for sourdough starter")
    finally:
        k.shutdown()
    assert any("Web results for 'sourdough starter'" in x
               and "1. Starter guide — https://bread.example/starter" in x for x in out), out
