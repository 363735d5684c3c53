"""Settings: defaults < config.toml (XDG) < OPENCORTEX_* environment < command-line flags.

The config file lives at ``$XDG_CONFIG_HOME/opencortex/config.toml`` (via platformdirs) or
wherever ``OPENCORTEX_CONFIG`` points.  Example::

    memex = "~/memex"

    [capture]
    target = "inbox.org"

    [todo]
    log_states = true        # note every state change ...
    log_into_drawer = true   # ... in a :LOGBOOK: drawer
"""

from __future__ import annotations

import hashlib
import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from .errors import ConfigError

__all__ = ["Settings", "config_path", "load_settings", "state_dir"]

APP = "opencortex"


def _dirs():  # platformdirs is cheap, but keep CLI start-up minimal anyway
    import platformdirs

    return platformdirs.PlatformDirs(APP, appauthor=False)


def config_path() -> Path:
    env = os.environ.get("OPENCORTEX_CONFIG")
    return Path(env).expanduser() if env else Path(_dirs().user_config_dir) / "config.toml"


def state_dir() -> Path:
    """The XDG state dir (logs, pid file, the code trust store): never inside a memex."""
    return Path(_dirs().user_state_dir)


@dataclass(slots=True)
class Settings:
    memex: Path = field(default_factory=lambda: Path("~/memex").expanduser())
    index: Path | None = None
    """Index database; None = derived from the memex path under the XDG cache dir."""
    capture_target: str = "inbox.org"
    log_into_drawer: bool = True
    """State-change notes go into a :LOGBOOK: drawer (org-log-into-drawer)."""
    log_states: bool = False
    """Add a ``- State "DONE" from "TODO" [time]`` note on every state change
    (repeating tasks always get one, as in Org)."""
    notes_dir: str = "notes"
    embedder: str = "minilm"
    """``minilm`` (in-process all-MiniLM-L6-v2) or ``openai:URL#MODEL`` (an
    OpenAI-compatible /v1/embeddings server)."""
    store_url: str | None = None
    """``postgresql://…`` to keep the index in PostgreSQL ([store] url,
    OPENCORTEX_STORE_URL, ``--store``); None = the SQLite file at ``index_path``."""
    store_schema: str = "opencortex"
    """The PostgreSQL schema holding this memex's index ([store] schema,
    OPENCORTEX_STORE_SCHEMA): several memexes can share one database."""
    trusted_clients: tuple[str, ...] = ()
    """Gateways that may see private notes ([guard] trusted_clients,
    OPENCORTEX_TRUSTED_CLIENTS=mcp,http): any of "mcp", "http", "telegram", "tui".  The
    local CLI is the person and always may; nobody else by default."""
    data: dict = field(default_factory=dict)
    """The parsed config file (sections such as [llm] and [guard] are read by their owners)."""
    source: dict[str, str] = field(default_factory=dict)
    """Where each setting came from (default, config, env, flag) — for ``doctor``."""
    archive_enabled: bool = True
    """The daemon's heartbeat copies new transcripts into the archive ([archive] enabled,
    OPENCORTEX_ARCHIVE); ``opencortex archive`` runs regardless."""
    archive_dir: Path | None = None
    """Where the transcript archive lives; None = ``<XDG data dir>/archive``."""
    archive_retention_days: float = 0.0
    """Archived records older than this many days are pruned; 0 = kept forever."""
    archive_interval: float = 300.0
    """Seconds between the heartbeat's archive passes."""

    @property
    def index_path(self) -> Path:
        if self.index is not None:
            return self.index
        key = hashlib.sha1(str(self.memex.resolve()).encode()).hexdigest()[:12]
        name = f"{self.memex.resolve().name or 'root'}-{key}.sqlite3"
        return Path(_dirs().user_cache_dir) / "index" / name

    @property
    def state_dir(self) -> Path:
        return state_dir()

    @property
    def archive_path(self) -> Path:
        return self.archive_dir or Path(_dirs().user_data_dir) / "archive"


_ENV_BOOL = {"1": True, "true": True, "yes": True, "on": True,
             "0": False, "false": False, "no": False, "off": False}


def _bool(value: object, name: str) -> bool:
    if isinstance(value, bool):
        return value
    b = _ENV_BOOL.get(str(value).strip().lower())
    if b is None:
        raise ConfigError(f"{name} must be true or false, got {value!r}")
    return b


def load_settings(memex: str | os.PathLike[str] | None = None,
                  index: str | os.PathLike[str] | None = None,
                  store: str | None = None) -> Settings:
    """Resolve settings from every layer; flags (the arguments: ``--memex``, ``--index``,
    ``--store``) win."""
    s = Settings()
    s.source = {"memex": "default"}
    path = config_path()
    data: dict = {}
    if path.exists():
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
            raise ConfigError(f"{path}: not valid TOML ({e}); fix or remove the file") from e
    s.data = data
    if "memex" in data:
        s.memex, s.source["memex"] = Path(str(data["memex"])).expanduser(), "config"
    if "index" in data:
        s.index, s.source["index"] = Path(str(data["index"])).expanduser(), "config"
    cap = data.get("capture", {})
    if "target" in cap:
        s.capture_target = str(cap["target"])
    todo = data.get("todo", {})
    if "log_into_drawer" in todo:
        s.log_into_drawer = _bool(todo["log_into_drawer"], "todo.log_into_drawer")
    if "log_states" in todo:
        s.log_states = _bool(todo["log_states"], "todo.log_states")
    if "embedder" in data.get("retrieval", {}):
        s.embedder = str(data["retrieval"]["embedder"])
    if "notes_dir" in data:
        s.notes_dir = str(data["notes_dir"])
    store_t = data.get("store", {})
    if store_t.get("url"):
        s.store_url, s.source["store"] = str(store_t["url"]), "config"
    if store_t.get("schema"):
        s.store_schema = str(store_t["schema"])
    arc = data.get("archive", {})
    if "enabled" in arc:
        s.archive_enabled = _bool(arc["enabled"], "archive.enabled")
    if arc.get("dir"):
        s.archive_dir = Path(str(arc["dir"])).expanduser()
    for key in ("retention_days", "interval"):
        if key in arc:
            try:
                val = float(arc[key])
            except (TypeError, ValueError):
                raise ConfigError(f"archive.{key} must be a number, got {arc[key]!r}") from None
            if val < 0:
                raise ConfigError(f"archive.{key} must be 0 or more, got {val}")
            setattr(s, f"archive_{key}", val)
    env = os.environ
    if env.get("OPENCORTEX_ARCHIVE"):
        s.archive_enabled = _bool(env["OPENCORTEX_ARCHIVE"], "OPENCORTEX_ARCHIVE")
    if env.get("OPENCORTEX_ARCHIVE_DIR"):
        s.archive_dir = Path(env["OPENCORTEX_ARCHIVE_DIR"]).expanduser()
    trusted = (data.get("guard") or {}).get("trusted_clients")
    if trusted is not None:
        if not isinstance(trusted, list) or not all(isinstance(x, str) for x in trusted):
            raise ConfigError('guard.trusted_clients must be a list of gateway names, e.g. '
                              '["mcp"]')
        s.trusted_clients = tuple(x.strip().lower() for x in trusted if x.strip())
    if env.get("OPENCORTEX_TRUSTED_CLIENTS") is not None:
        s.trusted_clients = tuple(x.strip().lower() for x in
                                  env["OPENCORTEX_TRUSTED_CLIENTS"].split(",") if x.strip())
    if env.get("OPENCORTEX_MEMEX"):
        s.memex, s.source["memex"] = Path(env["OPENCORTEX_MEMEX"]).expanduser(), "env"
    if env.get("OPENCORTEX_INDEX"):
        s.index, s.source["index"] = Path(env["OPENCORTEX_INDEX"]).expanduser(), "env"
    if env.get("OPENCORTEX_STORE_URL"):
        s.store_url, s.source["store"] = env["OPENCORTEX_STORE_URL"], "env"
    if env.get("OPENCORTEX_STORE_SCHEMA"):
        s.store_schema = env["OPENCORTEX_STORE_SCHEMA"]
    if env.get("OPENCORTEX_EMBEDDER"):
        s.embedder = env["OPENCORTEX_EMBEDDER"]
    if env.get("OPENCORTEX_CAPTURE_TARGET"):
        s.capture_target = env["OPENCORTEX_CAPTURE_TARGET"]
    if env.get("OPENCORTEX_LOG_STATES"):
        s.log_states = _bool(env["OPENCORTEX_LOG_STATES"], "OPENCORTEX_LOG_STATES")
    if memex is not None:
        s.memex, s.source["memex"] = Path(memex).expanduser(), "flag"
    if index is not None:
        s.index, s.source["index"] = Path(index).expanduser(), "flag"
    if store:
        s.store_url, s.source["store"] = store, "flag"
    return s
