"""The daemon's bearer token and bind checks: one secret, file mode 0600, loopback by default."""

from __future__ import annotations

import ipaddress
import os
import secrets
import socket
from pathlib import Path

from ..errors import ServerError

__all__ = ["TOKEN_ENV", "ServerError", "is_loopback", "load_or_create_token", "token_path"]

TOKEN_ENV = "OPENCORTEX_TOKEN"
MIN_REMOTE_TOKEN = 16
"""A token shorter than this is refused for a non-loopback bind (guessable)."""


def token_path() -> Path:
    """``<user_config_dir>/opencortex/token`` (next to config.toml)."""
    import platformdirs

    return Path(platformdirs.user_config_dir("opencortex", appauthor=False)) / "token"


def load_or_create_token() -> tuple[str, str]:
    """(token, where it came from: ``env`` or the file path); the file is created with
    0600 permissions when missing, so clients on this machine can read it and others cannot."""
    from ..config import env as setting

    env = (setting(TOKEN_ENV) or "").strip()
    if env:
        return env, "env"
    path = token_path()
    if path.exists():
        tok = path.read_text(encoding="utf-8").strip()
        if tok:
            if path.stat().st_mode & 0o077:
                path.chmod(0o600)  # tighten a file someone copied in with loose bits
            return tok, str(path)
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    tok = secrets.token_urlsafe(32)
    tmp = path.with_name(f".token.{os.getpid()}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(tok + "\n")
    os.replace(tmp, path)
    return tok, str(path)


def is_loopback(host: str) -> bool:
    """True only when every address ``host`` names is a loopback one."""
    h = host.strip("[]")
    if h == "localhost":
        return True
    try:
        return ipaddress.ip_address(h).is_loopback
    except ValueError:
        pass
    try:
        infos = socket.getaddrinfo(h, None)
    except OSError:
        return False
    return bool(infos) and all(ipaddress.ip_address(str(i[4][0]).split("%")[0]).is_loopback
                               for i in infos)
