"""``opencortex telegram`` as a process: config from config.toml, token from the env."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from click.testing import CliRunner

from opencortex.cli.gateway_cmds import telegram

from .test_gateway import OWNER, STRANGER, TOKEN, FakeBotAPI

RUN = "from opencortex.cli.gateway_cmds import telegram; telegram()"


def test_no_token_is_a_usage_error(memex: Path, tmp_path: Path) -> None:
    r = CliRunner().invoke(telegram, ["--memex", str(memex), "--index",
                                      str(tmp_path / "i.db"), "--token-env", "NO_SUCH_VAR"])
    assert r.exit_code == 2 and "NO_SUCH_VAR" in r.output


def test_the_command_serves_allowed_chats_and_stops_on_sigterm(memex: Path,
                                                               tmp_path: Path) -> None:
    api = FakeBotAPI()
    try:
        cfg = Path(os.environ["XDG_CONFIG_HOME"]) / "opencortex" / "config.toml"
        cfg.parent.mkdir(parents=True, exist_ok=True)
        cfg.write_text(f'[telegram]\ntoken_env = "MY_BOT"\napi_base = "{api.base}"\n'
                       f"poll_timeout = 0\n", encoding="utf-8")
        api.message(STRANGER, "caching strategies")
        api.message(OWNER, "caching strategies")
        env = dict(os.environ, MY_BOT=TOKEN)
        p = subprocess.Popen([sys.executable, "-c", RUN, "--memex", str(memex), "--index",
                              str(tmp_path / "i.db"), "--allow", str(OWNER)], env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            end = time.monotonic() + 60
            while not api.to(OWNER) and time.monotonic() < end and p.poll() is None:
                time.sleep(0.1)
            assert "notes/caching-strategies.org" in "\n".join(api.to(OWNER))
        finally:
            p.send_signal(signal.SIGTERM)
            out, err = p.communicate(timeout=30)
        assert p.returncode == 0, err
        assert api.to(STRANGER) == []
        assert f"chat {STRANGER}" in err and "ignored" in err
        assert TOKEN not in out + err
        logfile = Path(os.environ["XDG_STATE_HOME"]) / "opencortex" / "opencortex.log"
        logged = logfile.read_text(encoding="utf-8")
        assert f"chat {STRANGER}" in logged and TOKEN not in logged
    finally:
        api.close()
