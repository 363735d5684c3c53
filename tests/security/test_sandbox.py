"""Issue 12, shell: the OS sandbox holds even if the argument check were wrong.

The runner is called directly with commands that WRITE or reach the network (the guard
would never allow them): under bubblewrap they cannot write outside their tmpfs, cannot
touch a directory standing for $HOME, cannot modify the memex, cannot reach a loopback
HTTP server running in the test, and see no secrets of the parent's environment."""

from __future__ import annotations

import http.server
import os
import shutil
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import ClassVar

import pytest

from opencortex.guard import GuardPolicy, ShellError, run_shell
from opencortex.guard.sandbox import status

SANDBOX = status(GuardPolicy().shell)
needs_bwrap = pytest.mark.skipif(not SANDBOX.available,
                                 reason=f"bubblewrap is not usable here: {SANDBOX.detail}")
PY = shutil.which("python3", path=os.pathsep.join(GuardPolicy().shell.path))


def _policy(**shell: object) -> GuardPolicy:
    return GuardPolicy.from_config({"guard": {"shell": {
        "allow": ["sh", "touch", "mkdir", "echo", "cat", "rm", "mv", "ls", "env", "kill",
                  "sleep", "yes", "python3", "true"],
        "allow_shell": True, **shell}}})


@pytest.fixture
def memex(tmp_path: Path) -> Path:
    root = tmp_path / "memex"
    root.mkdir()
    (root / "gtd.org").write_text("* TODO Call Sam\n", encoding="utf-8")
    (root / "a.org").write_text("* A\n", encoding="utf-8")
    return root


@pytest.fixture
def off_tmp():
    """A directory outside /tmp (which the sandbox replaces anyway): /var/tmp."""
    base = Path("/var/tmp")
    if not (base.is_dir() and os.access(base, os.W_OK)):
        pytest.skip("/var/tmp is not writable")
    d = Path(tempfile.mkdtemp(prefix="oc-sandbox-", dir=base))
    yield d
    shutil.rmtree(d, ignore_errors=True)


@pytest.fixture
def home(off_tmp: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A directory standing for the person's $HOME, with a secret in it."""
    h = off_tmp / "home"
    (h / ".ssh").mkdir(parents=True)
    (h / ".ssh" / "id_ed25519").write_text("PRIVATE KEY\n")
    monkeypatch.setenv("HOME", str(h))
    return h


def _sh(script: str, memex: Path, **kw: object):
    return run_shell(["sh", "-c", script], _policy(), memex, memex_root=memex, **kw)


def _snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file()}


@needs_bwrap
def test_cannot_write_outside_its_tmpfs(memex: Path, home: Path, off_tmp: Path,
                                        tmp_path: Path) -> None:
    outside = off_tmp / "outside"
    outside.mkdir()
    r = _sh(f"touch {outside}/x; echo pwned > {home}/planted; mkdir -p {home}/.config/evil;"
            f" touch {home}/.bashrc; echo ok > $HOME/scratch && cat $HOME/scratch", memex)
    assert r.sandboxed
    assert r.stdout == "ok\n"  # its own HOME (in the tmpfs) is writable
    assert list(outside.iterdir()) == []
    assert sorted(p.name for p in home.iterdir()) == [".ssh"]
    r = _sh(f"touch {tmp_path}/in-tmp; ls {tmp_path}", memex)  # /tmp is its own tmpfs
    assert not (tmp_path / "in-tmp").exists()
    # control: the same script unboxed really writes (the test can fail)
    r = _sh(f"touch {outside}/x", memex, sandbox=False)
    assert (outside / "x").exists()


@needs_bwrap
def test_the_home_is_hidden(memex: Path, home: Path) -> None:
    r = _sh(f"cat {home}/.ssh/id_ed25519", memex)
    assert "PRIVATE KEY" not in r.stdout and r.returncode != 0
    assert _sh(f"ls -A {home}", memex).stdout == ""
    assert "PRIVATE KEY" in _sh(f"cat {home}/.ssh/id_ed25519", memex, sandbox=False).stdout


@needs_bwrap
def test_cannot_modify_the_memex(memex: Path, home: Path) -> None:
    before = _snapshot(memex)
    r = _sh("echo '* TODO planted' >> gtd.org; rm -f a.org; mv gtd.org moved.org; "
            "touch new.org; mkdir skills; cat gtd.org", memex)
    assert r.sandboxed and "Read-only file system" in r.stderr
    assert r.stdout == "* TODO Call Sam\n"  # it can read the memex
    assert _snapshot(memex) == before
    assert sorted(p.name for p in memex.iterdir()) == ["a.org", "gtd.org"]


class _Hits(http.server.BaseHTTPRequestHandler):
    hits: ClassVar[list[str]] = []

    def do_GET(self) -> None:
        _Hits.hits.append(self.path)
        body = b"secret-from-parent"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *a: object) -> None:
        pass


@needs_bwrap
@pytest.mark.skipif(PY is None, reason="no python3 in the standard bin directories")
def test_cannot_reach_the_network(memex: Path, home: Path) -> None:
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Hits)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{srv.server_address[1]}/probe"
    code = ("import urllib.request,sys\n"
            "try:\n print(urllib.request.urlopen(sys.argv[1], timeout=3).read().decode())\n"
            "except Exception as e:\n print('blocked', type(e).__name__)")
    try:
        _Hits.hits = []
        r = run_shell(["python3", "-c", code, url], _policy(), memex, memex_root=memex,
                      sandbox=False)
        assert "secret-from-parent" in r.stdout and _Hits.hits == ["/probe"]  # control
        _Hits.hits = []
        r = run_shell(["python3", "-c", code, url], _policy(), memex, memex_root=memex)
        assert r.sandboxed and "blocked" in r.stdout, (r.stdout, r.stderr)
        assert "secret-from-parent" not in r.stdout and _Hits.hits == []
    finally:
        srv.shutdown()
        srv.server_close()


@needs_bwrap
def test_no_secrets_no_sockets_no_parent_processes(memex: Path, home: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-leak-me")
    monkeypatch.setenv("GITHUB_TOKEN", "leak-me-too")
    r = run_shell(["env"], _policy(), memex, memex_root=memex)
    env = dict(line.split("=", 1) for line in r.stdout.splitlines() if "=" in line)
    assert "leak-me" not in r.stdout and env["HOME"] == "/tmp/home"
    assert env["GIT_CONFIG_COUNT"] and env["PATH"]
    r = _sh(f"ls -A /run; kill -0 {os.getpid()} && echo can-signal-parent", memex)
    assert "can-signal-parent" not in r.stdout and r.stdout.strip() == ""


@needs_bwrap
def test_timeout_and_output_cap_hold_in_the_sandbox(memex: Path, home: Path) -> None:
    t = time.monotonic()
    r = run_shell(["sh", "-c", "sleep 5 & sleep 5"], _policy(timeout=0.5), memex,
                  memex_root=memex)
    assert r.sandboxed and r.timed_out and time.monotonic() - t < 3
    r = run_shell(["yes"], _policy(max_output=1000), memex, memex_root=memex)
    assert r.sandboxed and r.truncated and len(r.stdout) < 1200


def test_sandbox_off_or_missing(memex: Path) -> None:
    off = _policy(sandbox="off")
    r = run_shell(["true"], off, memex, memex_root=memex)
    assert not r.sandboxed and r.returncode == 0
    with pytest.raises(ShellError, match="no sandbox"):
        run_shell(["true"], off, memex, memex_root=memex, sandbox=True)
    missing = GuardPolicy.from_config({"guard": {"shell": {
        "allow": ["true"], "path": ["/usr/bin", "/bin", str(memex)], "sandbox": "required"}}})
    if SANDBOX.available:  # bwrap is in /usr/bin here: required and present runs boxed
        assert run_shell(["true"], missing, memex, memex_root=memex).sandboxed
    nobin = GuardPolicy.from_config({"guard": {"shell": {
        "allow": ["/bin/true"], "path": [str(memex)], "sandbox": "required"}}})
    assert not status(nobin.shell).available
    assert "apt-get install bubblewrap" in status(nobin.shell).detail
    with pytest.raises(ShellError, match="required"):
        run_shell(["/bin/true"], nobin, memex, memex_root=memex)


@needs_bwrap
def test_an_allowed_command_whose_repo_config_runs_code_still_cannot_write(
        memex: Path, home: Path, off_tmp: Path) -> None:
    """`git diff` is read-only by its arguments, but a synced .git/config + .gitattributes
    can make git run a textconv program: the sandbox is what holds then."""
    env = {"PATH": "/usr/bin:/bin", "HOME": str(home), "GIT_CONFIG_GLOBAL": "/dev/null"}
    planted = off_tmp / "planted"

    def git(*a: str) -> None:
        subprocess.run(["git", *a], cwd=memex, check=True, env=env, capture_output=True)

    git("init", "-q")
    git("add", "-A")
    git("-c", "user.name=t", "-c", "user.email=t@x", "commit", "-qm", "one")
    (memex / ".gitattributes").write_text("*.org diff=evil\n")
    git("config", "diff.evil.textconv",
        f"sh -c 'touch {planted}; echo x >> {memex}/gtd.org; cat \"$1\"' -")
    (memex / "a.org").write_text("* A changed\n")
    before = (memex / "gtd.org").read_bytes()
    subprocess.run(["git", "diff"], cwd=memex, env=env, capture_output=True, check=False)
    assert planted.exists()  # control: unboxed, the planted program runs and writes
    planted.unlink()
    (memex / "gtd.org").write_bytes(before)
    policy = GuardPolicy.from_config({"guard": {"shell": {"allow": ["git"]}}})
    r = run_shell(["git", "diff"], policy, memex, memex_root=memex)
    assert r.sandboxed and "A changed" in r.stdout, r.stderr
    assert not planted.exists() and (memex / "gtd.org").read_bytes() == before
