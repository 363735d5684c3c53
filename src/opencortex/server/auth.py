"""The daemon's bearer token and bind checks: one secret, file mode 0600, loopback by default."""

from __future__ import annotations

import ipaddress
import os
import secrets
import socket
from pathlib import Path

from ..errors import ServerError

__all__ = ["APPROVER_ENV", "APPROVER_HEADER", "TOKEN_ENV", "ServerError", "approver_token_path",
           "is_loopback", "load_approver_token", "load_or_create_token", "token_path"]

TOKEN_ENV = "OPENCORTEX_TOKEN"
APPROVER_ENV = "OPENCORTEX_APPROVER_TOKEN"
APPROVER_HEADER = "X-OpenCortex-Approver"
"""The header that carries the approver token: only the person's own tools (the TUI, the
Emacs package, the CLI on this machine) read the approver token file, so only they can
resolve an approval; the API token every client holds cannot."""
MIN_REMOTE_TOKEN = 16
"""A token shorter than this is refused for a non-loopback bind (guessable)."""


def token_path() -> Path:
    """``<user_config_dir>/opencortex/token`` (next to config.toml)."""
    import platformdirs

    return Path(platformdirs.user_config_dir("opencortex", appauthor=False)) / "token"


def approver_token_path() -> Path:
    """``<user_config_dir>/opencortex/approver-token`` (0600): the person's credential."""
    return token_path().with_name("approver-token")


def load_or_create_token() -> tuple[str, str]:
    """(token, where it came from: ``env`` or the file path); the file is created with
    0600 permissions when missing, so clients on this machine can read it and others cannot."""
    return _load_or_create(TOKEN_ENV, token_path())


def load_approver_token(create: bool = True) -> str | None:
    """The approver token (``$OPENCORTEX_APPROVER_TOKEN``, else the 0600 file, created by
    the daemon when missing); None when there is none and ``create`` is false."""
    if not create:
        from ..config import env as setting

        env = (setting(APPROVER_ENV) or "").strip()
        path = approver_token_path()
        if env:
            return env
        try:
            return path.read_text(encoding="utf-8").strip() or None
        except OSError:
            return None
    return _load_or_create(APPROVER_ENV, approver_token_path())[0]


def _load_or_create(var: str, path: Path) -> tuple[str, str]:
    from ..config import env as setting

    env = (setting(var) or "").strip()
    if env:
        return env, "env"
    if path.exists():
        tok = path.read_text(encoding="utf-8").strip()
        if tok:
            if path.stat().st_mode & 0o077:
                path.chmod(0o600)  # tighten a file someone copied in with loose bits
            return tok, str(path)
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    tok = secrets.token_urlsafe(32)
    tmp = path.with_name(f".{path.name}.{os.getpid()}")
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
