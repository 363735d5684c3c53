"""The daemon as a process: token file, bind refusal, SIGTERM with a request in flight."""

from __future__ import annotations

import http.client
import json
import os
import signal
import socket
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

pytest.importorskip("uvicorn")

from opencortex.cli.serve_cmds import serve, token
from opencortex.server import is_loopback, token_path
from opencortex.server.run import check_bind


def test_token_created_0600_and_stable(monkeypatch: pytest.MonkeyPatch) -> None:
    r = CliRunner().invoke(token, ["--json"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    p = token_path()
    assert out["source"] == str(p) and len(out["token"]) >= 32
    assert stat.S_IMODE(p.stat().st_mode) == 0o600
    assert CliRunner().invoke(token, []).output.strip() == out["token"]
    monkeypatch.setenv("OPENCORTEX_TOKEN", "from-the-env-0123456789")
    assert json.loads(CliRunner().invoke(token, ["--json"]).output) == {
        "token": "from-the-env-0123456789", "source": "env"}


def test_non_loopback_bind_refused(memex: Path) -> None:
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.0.2.7")
    r = CliRunner().invoke(serve, ["--memex", str(memex), "--host", "0.0.0.0", "--json"])
    assert r.exit_code != 0 and "refusing to bind 0.0.0.0" in r.output
    check_bind("0.0.0.0", True, "x" * 32)  # allowed when asked for, with a real token
    with pytest.raises(Exception, match="token"):
        check_bind("0.0.0.0", True, "short")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_sigterm_finishes_in_flight_and_removes_pid(memex: Path, tmp_path: Path) -> None:
    port = _free_port()
    env = {**os.environ, "OPENCORTEX_TOKEN": "tok-0123456789abcdef"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "opencortex.server", "serve", "--memex", str(memex),
         "--index", str(tmp_path / "i.sqlite3"), "--port", str(port), "--heartbeat", "0",
         "--log-level", "warning"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    pid_file = Path(os.environ["XDG_STATE_HOME"]) / "opencortex" / "serve.pid"
    try:
        for _ in range(600):
            try:
                c = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
                c.request("GET", "/healthz")
                if c.getresponse().status == 200:
                    break
            except OSError:
                time.sleep(0.05)
        else:
            pytest.fail("daemon did not come up: " + proc.stderr.read1().decode())
        assert pid_file.read_text().strip() == str(proc.pid)
        # an in-flight request: a chat waiting for approval of "run date"
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        c.request("POST", "/v1/chat", body=json.dumps({"message": "run date", "stream": True}),
                  headers={"Authorization": "Bearer tok-0123456789abcdef"})
        r = c.getresponse()
        assert r.status == 200
        first = r.readline() + r.readline()
        assert first.startswith(b"event: approval")
        proc.send_signal(signal.SIGTERM)
        rest = r.read().decode()  # the stream still ends properly
        assert "Not done: denied." in rest and "event: done" in rest
        assert proc.wait(60) == 0
        assert not pid_file.exists()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)


def test_busy_port_is_a_clear_usage_error(memex: Path, tmp_path: Path) -> None:
    """Issue 27: uvicorn's traceback and exit 3 became one line naming --port, exit 2."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        proc = subprocess.run(
            [sys.executable, "-m", "opencortex.server", "serve", "--memex", str(memex),
             "--index", str(tmp_path / "i.sqlite3"), "--port", str(port), "--heartbeat", "0"],
            capture_output=True, text=True, timeout=120)
        as_json = subprocess.run(
            [sys.executable, "-m", "opencortex.server", "serve", "--memex", str(memex),
             "--index", str(tmp_path / "i.sqlite3"), "--port", str(port), "--json"],
            capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr and "--port" in proc.stderr
    assert f"port {port} on 127.0.0.1 is already in use" in proc.stderr
    body = json.loads(as_json.stdout)
    assert as_json.returncode == 2 and body["ok"] is False and body["type"] == "ServerError"
    pid_file = Path(os.environ["XDG_STATE_HOME"]) / "opencortex" / "serve.pid"
    assert not pid_file.exists()
