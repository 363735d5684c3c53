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
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import ConfigError

__all__ = ["ENVIRONMENT", "GtdSettings", "GuardSettings", "IdentitySettings", "LlmSettings", "RecallSettings",
           "ServerSettings", "SessionsSettings", "Settings", "TelegramSettings", "WebSettings", "config_path",
           "env", "load_settings", "state_dir"]

APP = "opencortex"
RECORD_GLOB = "[0-9][0-9][0-9][0-9]/[0-9][0-9]/[0-9][0-9]-*.org"
"""A session record's path inside its sessions folder: ``YYYY/MM/DD-<session>.org``."""
LEGACY_GLOB = "sessions/[0-9][0-9][0-9][0-9]/[0-9][0-9]/*.org"
"""Where session records were written before they left the memex (memex-relative)."""
LEGACY_RECORD = re.compile(r"sessions/\d{4}/\d{2}/[^/]+\.org")
"""Where session records were written before they left the memex (memex-relative)."""

ENVIRONMENT: dict[str, str] = {
    "OPENCORTEX_CONFIG": "the config file (default: XDG config dir/opencortex/config.toml)",
    "OPENCORTEX_MEMEX": "the memex folder",
    "OPENCORTEX_INDEX": "the SQLite index file",
    "OPENCORTEX_STORE_URL": "postgresql://… to keep the index in PostgreSQL",
    "OPENCORTEX_STORE_SCHEMA": "the PostgreSQL schema of this memex's index",
    "OPENCORTEX_EMBEDDER": "the embedder spec (minilm, openai:URL#MODEL)",
    "OPENCORTEX_CAPTURE_TARGET": "where capture files entries",
    "OPENCORTEX_SESSIONS": "record conversations as session records (true/false)",
    "OPENCORTEX_SESSIONS_DIR": "where session records live (relative: a memex folder)",
    "OPENCORTEX_LOG_STATES": "note every TODO state change",
    "OPENCORTEX_ARCHIVE": "the heartbeat archives transcripts (true/false)",
    "OPENCORTEX_ARCHIVE_DIR": "where the transcript archive lives",
    "OPENCORTEX_TRUSTED_CLIENTS": "gateways that may see private notes (mcp,http,…)",
    "OPENCORTEX_SEARCH_ENDPOINT": "the web-search (SearXNG) endpoint",
    "OPENCORTEX_RECALL_DEFAULTS": "recall also reads known agents' transcript folders",
    "OPENCORTEX_RECALL_SOURCES": "extra KIND:PATH recall sources, comma-separated",
    "OPENCORTEX_RECALL_INDEX": "recall's record index: local or store",
    "OPENCORTEX_WEEK_START": "the day a week begins on for GTD dates ([gtd] week_start)",
    "OPENCORTEX_LLM_BASE_URL": "one model server (URL or preset) replacing [llm]",
    "OPENCORTEX_LLM_MODEL": "the model of OPENCORTEX_LLM_BASE_URL",
    "OPENCORTEX_LLM_API_KEY": "the API key of OPENCORTEX_LLM_BASE_URL (optional)",
    "OPENCORTEX_LLM_PROFILE": "prompt sizes for the model: small or large ([llm] profile)",
    "OPENCORTEX_LLM_BUDGET": "seconds a request waits for the model ([llm] budget)",
    "OPENCORTEX_EMBED_API_KEY": "the default variable of an openai: embedder's API key",
    "OPENCORTEX_TELEGRAM_TOKEN": "the default variable of the Telegram bot token",
    "OPENCORTEX_TOKEN": "the daemon's bearer token (else the token file)",
    "OPENCORTEX_APPROVER_TOKEN": "the person's approver token (else the approver-token file)",
    "OPENCORTEX_LOAD_PLUGINS": "plugin allow-list, comma-separated (empty: none)",
    "OPENCORTEX_RG": "the ripgrep binary",
    "OPENCORTEX_NO_PROGRESS": "no progress bars",
}
"""Every ``OPENCORTEX_*`` variable OpenCortex reads, with what it sets: read them through
:func:`env` (API keys are different: their variable is named by a setting, e.g.
``api_key_env``, and read where the key is used)."""


def env(name: str) -> str | None:
    """The value of one documented ``OPENCORTEX_*`` variable (None when unset).  A name not
    in :data:`ENVIRONMENT` is a programming error: document the variable there first."""
    if name not in ENVIRONMENT:
        raise KeyError(f"{name} is not a documented OpenCortex variable (config.ENVIRONMENT)")
    return os.environ.get(name)


def _dirs():  # platformdirs is cheap, but keep CLI start-up minimal anyway
    import platformdirs

    return platformdirs.PlatformDirs(APP, appauthor=False)


def config_path() -> Path:
    where = env("OPENCORTEX_CONFIG")
    return Path(where).expanduser() if where else Path(_dirs().user_config_dir) / "config.toml"


def cache_dir() -> Path:
    """The XDG cache dir (derived files, rebuilt when missing: index, models, patterns)."""
    return Path(_dirs().user_cache_dir)


def state_dir() -> Path:
    """The XDG state dir (logs, pid file, the code trust store): never inside a memex."""
    return Path(_dirs().user_state_dir)


# -- typed sections: each config table parsed once, here, with the setting named on error --
def _table(data: Mapping[str, Any], name: str) -> Mapping[str, Any]:
    t = data.get(name) or {}
    if not isinstance(t, Mapping):
        raise ConfigError(f"[{name}] in the config must be a table")
    return t


def _num(t: Mapping[str, Any], key: str, where: str, kind: type = float) -> Any:
    """``t[key]`` as a non-negative number (None when absent)."""
    if key not in t:
        return None
    v = t[key]
    if isinstance(v, bool) or not isinstance(v, int | float) or v < 0 or \
            (kind is int and not float(v).is_integer()):
        what = "a whole number" if kind is int else "a number"
        raise ConfigError(f"{where}.{key} must be {what} >= 0, got {v!r}")
    return kind(v)


def _strs(t: Mapping[str, Any], key: str, where: str) -> tuple[str, ...]:
    v = t.get(key, [])
    if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
        raise ConfigError(f'{where}.{key} must be a list of strings, e.g. ["a", "b"]')
    return tuple(v)


@dataclass(frozen=True, slots=True)
class ServerSettings:
    """``[server]``: the daemon's defaults (flags win; None: the server's own default)."""

    host: str | None = None
    port: int | None = None
    heartbeat: float | None = None
    rate: float | None = None
    burst: float | None = None
    approval_timeout: float | None = None
    max_body: int | None = None
    request_timeout: float | None = None
    allowed_hosts: tuple[str, ...] = ()

    @classmethod
    def parse(cls, t: Mapping[str, Any]) -> ServerSettings:
        host = t.get("host")
        if host is not None and (not isinstance(host, str) or not host.strip()):
            raise ConfigError(f"server.host must be an address, got {host!r}")
        nums = {k: _num(t, k, "server") for k in ("heartbeat", "rate", "burst",
                                                  "approval_timeout", "request_timeout")}
        return cls(host=host, port=_num(t, "port", "server", int),
                   max_body=_num(t, "max_body", "server", int),
                   allowed_hosts=_strs(t, "allowed_hosts", "server"), **nums)


@dataclass(frozen=True, slots=True)
class TelegramSettings:
    """``[telegram]``: the bot gateway."""

    token_env: str = "OPENCORTEX_TELEGRAM_TOKEN"
    """The environment variable holding the bot token (never the token itself)."""
    allow: tuple[int, ...] = ()
    api_base: str | None = None
    poll_timeout: int = 30

    @classmethod
    def parse(cls, t: Mapping[str, Any]) -> TelegramSettings:
        try:
            allow = [int(c) for c in t.get("allow") or [] if not isinstance(c, bool)]
            if not isinstance(t.get("allow") or [], list):
                raise TypeError
        except (TypeError, ValueError):
            raise ConfigError("[telegram] allow must be a list of chat ids, e.g. "
                              "[123456789]") from None
        env = t.get("token_env") or "OPENCORTEX_TELEGRAM_TOKEN"
        base = t.get("api_base") or None
        if not isinstance(env, str) or (base is not None and not isinstance(base, str)):
            raise ConfigError("telegram.token_env and telegram.api_base must be strings")
        poll = _num(t, "poll_timeout", "telegram", int)
        if not env.strip():
            raise ConfigError("telegram.token_env must name an environment variable")
        return cls(token_env=env, allow=tuple(allow), api_base=base,
                   poll_timeout=30 if poll is None else poll)

    def token(self, var: str | None = None) -> str:
        """The bot token from the environment variable ``var`` (default ``token_env``)."""
        return os.environ.get(var or self.token_env, "").strip()


@dataclass(frozen=True, slots=True)
class WebSettings:
    """``[web]``: the web-search endpoint (a SearXNG instance), else
    ``OPENCORTEX_SEARCH_ENDPOINT``; None: web search is off."""

    search_endpoint: str | None = None

    @classmethod
    def parse(cls, t: Mapping[str, Any], env: Mapping[str, str] | None = None) -> WebSettings:
        env = os.environ if env is None else env
        v = t.get("search_endpoint")
        if v is not None and not isinstance(v, str):
            raise ConfigError(f"web.search_endpoint must be a URL string, got {v!r}")
        if v is None:
            v = env.get("OPENCORTEX_SEARCH_ENDPOINT")
        return cls(search_endpoint=v or None)


@dataclass(frozen=True, slots=True)
class IdentitySettings:
    """``[identity]``: who the person is (the context header, @name requests)."""

    name: str = ""
    location: str = ""
    timezone: str = ""

    @classmethod
    def parse(cls, t: Mapping[str, Any]) -> IdentitySettings:
        out = {}
        for key in ("name", "location", "timezone"):
            v = t.get(key, "")
            if not isinstance(v, str):
                raise ConfigError(f"identity.{key} must be a string, got {v!r}")
            out[key] = v
        return cls(**out)

    def as_dict(self) -> dict[str, str]:
        return {"name": self.name, "location": self.location, "timezone": self.timezone}


@dataclass(frozen=True, slots=True)
class RecallSettings:
    """``[recall]`` (+ ``OPENCORTEX_RECALL_*``): which record sources recall reads."""

    defaults: bool = True
    """Also read the default transcript folders of known agents (Claude Code, Codex, …)."""
    sources: tuple[str, ...] = ()
    """Extra ``KIND:PATH`` roots ([recall] sources + OPENCORTEX_RECALL_SOURCES)."""
    index: str = "local"
    """``local`` (this machine's SQLite) or ``store`` (the PostgreSQL store itself)."""

    @classmethod
    def parse(cls, t: Mapping[str, Any], env: Mapping[str, str]) -> RecallSettings:
        d = env.get("OPENCORTEX_RECALL_DEFAULTS")
        defaults = (d not in ("0", "false", "no") if d is not None
                    else _bool(t.get("defaults", True), "recall.defaults"))
        sources = list(_strs(t, "sources", "recall"))
        sources += [x.strip() for x in env.get("OPENCORTEX_RECALL_SOURCES", "").split(",")
                    if x.strip()]
        where = env.get("OPENCORTEX_RECALL_INDEX") or str(t.get("index", "local"))
        if where not in ("local", "store"):
            raise ConfigError(f'recall.index must be "local" or "store", got {where!r}')
        return cls(defaults=defaults, sources=tuple(sources), index=where)


@dataclass(frozen=True, slots=True)
class SessionsSettings:
    """``[sessions]`` (+ ``OPENCORTEX_SESSIONS*``): where the agent's own conversation
    records live.  They are the agent's records, not the person's notes: by default outside
    the memex, so no search, review, clock sum or agenda of the person's work counts them."""

    record: bool = True
    """Record each conversation turn at all (``record = false``: nothing is written)."""
    dir: str | None = None
    """None = ``<XDG data dir>/opencortex/sessions/<memex name>-<hash>``; a relative path is
    a folder of the memex the person opts into (still never indexed as notes); an absolute
    one is used as is."""
    retention_days: float = 365.0
    """Records whose last turn is older than this many days are deleted; 0 = kept forever."""

    @classmethod
    def parse(cls, t: Mapping[str, Any], env: Mapping[str, str]) -> SessionsSettings:
        rec = env.get("OPENCORTEX_SESSIONS")
        record = (_bool(rec, "OPENCORTEX_SESSIONS") if rec
                  else _bool(t.get("record", True), "sessions.record"))
        where = env.get("OPENCORTEX_SESSIONS_DIR") or t.get("dir")
        if where is not None and (not isinstance(where, str) or not where.strip()):
            raise ConfigError('sessions.dir must be a folder, e.g. "~/.local/share/'
                              'opencortex/sessions" or "agent/sessions" (inside the memex)')
        days = _num(t, "retention_days", "sessions", float)
        return cls(record=record, dir=where.strip() if where else None,
                   retention_days=365.0 if days is None else days)


WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")


@dataclass(frozen=True, slots=True)
class GtdSettings:
    """``[gtd]`` (+ ``OPENCORTEX_WEEK_START``): how the GTD skill reads dates."""

    week_start: int = 0
    """The day a week begins on, 0 Monday … 6 Sunday (``week_start = "sunday"``): what
    "next week", "the week after next", "friday next week" and "end of the week" mean."""

    @classmethod
    def parse(cls, t: Mapping[str, Any], env: Mapping[str, str]) -> GtdSettings:
        raw = env.get("OPENCORTEX_WEEK_START") or t.get("week_start", "monday")
        name = raw.strip().lower() if isinstance(raw, str) else ""
        day = next((i for i, d in enumerate(WEEKDAYS) if len(name) >= 2
                    and d.startswith(name)), None)
        if day is None:
            raise ConfigError(f'gtd.week_start must be a weekday name, e.g. "monday" or '
                              f'"sunday"; got {raw!r}')
        return cls(week_start=day)


@dataclass(frozen=True, slots=True)
class LlmSettings:
    """``[llm]``: the model cascade's table, validated by ``opencortex.llm.config``
    (with the ``OPENCORTEX_LLM_*`` override) when a Runtime is built."""

    table: Any = field(default_factory=dict)
    """The raw ``[llm]`` value (a table unless the file is wrong: the parser says so)."""

    def config(self) -> dict[str, Any]:
        """The shape ``providers_from_config`` takes."""
        return {"llm": self.table} if self.table else {}


@dataclass(slots=True)
class GuardSettings:
    """``[guard]``: tool verdicts, shell and web policy, privacy tags.  Parsed into a
    :class:`~opencortex.guard.policy.GuardPolicy` on first use by
    :func:`opencortex.guard.policy.policy_of`, then kept here."""

    table: Any = field(default_factory=dict)
    """The raw ``[guard]`` value (a table unless the file is wrong: the parser says so)."""
    parsed: Any = field(default=None, repr=False, compare=False)
    """The GuardPolicy once parsed (set by ``guard.policy.policy_of``; config imports no guard)."""



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
    priorities: str = "A C B"
    """The priority range where a file sets no ``#+PRIORITIES:`` ([todo] priorities, in that
    keyword's form: highest, lowest, default — Org's own default is A to C, B)."""
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
    """The raw parsed config file, for ``doctor`` and tools that show it: code reads the
    typed sections below (:meth:`apply_config` replaces both together)."""
    server: ServerSettings = field(default_factory=ServerSettings)
    telegram: TelegramSettings = field(default_factory=TelegramSettings)
    web: WebSettings = field(default_factory=WebSettings)
    identity: IdentitySettings = field(default_factory=IdentitySettings)
    recall: RecallSettings = field(default_factory=RecallSettings)
    sessions: SessionsSettings = field(default_factory=SessionsSettings)
    gtd: GtdSettings = field(default_factory=GtdSettings)
    llm: LlmSettings = field(default_factory=LlmSettings)
    guard: GuardSettings = field(default_factory=GuardSettings)
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

    def apply_config(self, data: Mapping[str, Any],
                     env: Mapping[str, str] | None = None) -> None:
        """Parse a config file's tables into the typed sections (load_settings does this
        once; tests and tools that swap the config call it)."""
        env = os.environ if env is None else env
        self.data = dict(data)
        self.server = ServerSettings.parse(_table(data, "server"))
        self.telegram = TelegramSettings.parse(_table(data, "telegram"))
        self.web = WebSettings.parse(_table(data, "web"), env)
        self.identity = IdentitySettings.parse(_table(data, "identity"))
        self.recall = RecallSettings.parse(_table(data, "recall"), env)
        self.sessions = SessionsSettings.parse(_table(data, "sessions"), env)
        self.gtd = GtdSettings.parse(_table(data, "gtd"), env)
        # [llm] and [guard] are checked by their parsers when first needed (a Runtime,
        # the guard), so a mistake there stops the agent, not `opencortex index`
        self.llm = LlmSettings(data.get("llm") or {})
        self.guard = GuardSettings(data.get("guard") or {})

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
    def sessions_path(self) -> Path:
        """Where this memex's session records live (see :class:`SessionsSettings`)."""
        d = self.sessions.dir
        if d is None:
            root = self.memex.expanduser().resolve()
            key = hashlib.sha1(str(root).encode()).hexdigest()[:12]
            return Path(_dirs().user_data_dir) / "sessions" / f"{root.name or 'root'}-{key}"
        p = Path(d).expanduser()
        return p if p.is_absolute() else self.memex.expanduser().resolve() / p

    @property
    def record_folder(self) -> str | None:
        """The opted-into sessions folder relative to the memex (posix, ending in ``/``),
        or None when the records live outside it."""
        root = self.memex.expanduser().resolve()
        try:
            rel = self.sessions_path.resolve().relative_to(root).as_posix()
        except ValueError:
            return None
        return rel.rstrip("/") + "/" if rel and rel != "." else None

    def is_record_file(self, rel: str) -> bool:
        """Whether ``rel`` (a memex-relative posix path) is one of the agent's records,
        never the person's notes: anything in the opted-into sessions folder, or a record
        of the old layout (``sessions/YYYY/MM/DD-<id>.org``) until ``opencortex sessions
        migrate`` moves it.  The index skips them, so search, review, clocks and the
        agenda never count them."""
        return self.record_filter()(rel)

    def record_filter(self) -> Callable[[str], bool]:
        """:meth:`is_record_file` with the folder resolved once (a sync tests every file)."""
        folder = self.record_folder

        def is_record(rel: str) -> bool:
            return bool((folder and rel.startswith(folder)) or (
                rel.startswith("sessions/") and LEGACY_RECORD.fullmatch(rel)))

        return is_record

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


_TOP_KEYS = ("memex", "index", "notes_dir")
"""Settings written at the top of the file, outside any table."""
_PLAIN_TABLES: dict[str, tuple[str, ...]] = {
    "capture": ("target",),
    "todo": ("log_into_drawer", "log_states", "priorities"),
    "retrieval": ("embedder",),
    "store": ("url", "schema"),
    "archive": ("enabled", "dir", "retention_days", "interval"),
}
"""The tables ``load_settings`` reads key by key, with every key it reads."""


def known_config() -> dict[str, tuple[str, ...] | None]:
    """Every table a config file may have: its keys, or None where the table's own parser
    checks them ([llm], [guard]).  The typed sections' keys are their dataclass fields."""
    from dataclasses import fields

    typed = {"server": ServerSettings, "telegram": TelegramSettings, "web": WebSettings,
             "identity": IdentitySettings, "recall": RecallSettings,
             "sessions": SessionsSettings, "gtd": GtdSettings}
    out: dict[str, tuple[str, ...] | None] = dict(_PLAIN_TABLES)
    out.update({name: tuple(f.name for f in fields(cls)) for name, cls in typed.items()})
    out.update({"llm": None, "guard": None})
    return out


def _did_you_mean(name: str, known: list[str], fmt: str) -> str:
    import difflib

    close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
    return f"; did you mean {fmt.format(close[0])}?" if close else ""


def check_config_names(data: Mapping[str, Any], where: object = "the config") -> None:
    """Refuse unknown tables and keys (a typo like ``[captur]`` would otherwise be ignored
    without a word), naming the closest known one."""
    known = known_config()
    for name, value in data.items():
        if name in known and not isinstance(value, Mapping):
            continue  # a known section that is not a table: its own parser says so
        if isinstance(value, Mapping):
            if name not in known:
                raise ConfigError(
                    f"{where}: unknown section [{name}]"
                    f"{_did_you_mean(name, sorted(known), '[{}]')} (known sections: "
                    f"{', '.join(f'[{k}]' for k in sorted(known))})")
            keys = known[name]
            if keys is None:
                continue
            for key in value:
                if key not in keys:
                    raise ConfigError(
                        f"{where}: unknown key {key!r} in [{name}]"
                        f"{_did_you_mean(key, list(keys), '{!r}')} (known: {', '.join(keys)})")
        elif name not in _TOP_KEYS:
            hint = _did_you_mean(name, list(_TOP_KEYS) + sorted(known), "{!r}")
            raise ConfigError(f"{where}: unknown setting {name!r}{hint} (top-level settings: "
                              f"{', '.join(_TOP_KEYS)}; everything else goes in a [section])")


def priority_range(spec: str) -> list[str]:
    """The priorities ``#+PRIORITIES:``-style ``spec`` allows, highest first ("A C B" ->
    A, B, C; "1 10 5" -> 1..10); empty when the spec is not of that form."""
    parts = spec.split()
    if len(parts) not in (2, 3):
        return []
    hi, lo = parts[0], parts[1]
    if hi.isdigit() and lo.isdigit() and int(hi) <= int(lo) <= 64:
        return [str(i) for i in range(int(hi), int(lo) + 1)]
    if len(hi) == 1 and len(lo) == 1 and hi.isalpha() == lo.isalpha() and hi <= lo:
        return [chr(c) for c in range(ord(hi), ord(lo) + 1)]
    return []


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
        import tomllib  # here: without a config file (as in a fresh install) no TOML parser

        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
            raise ConfigError(f"{path}: not valid TOML ({e}); fix or remove the file") from e
    check_config_names(data, path)
    s.apply_config(data)
    if "memex" in data:
        s.memex, s.source["memex"] = Path(str(data["memex"])).expanduser(), "config"
    if "index" in data:
        s.index, s.source["index"] = Path(str(data["index"])).expanduser(), "config"
    cap = data.get("capture", {})
    if "target" in cap:
        s.capture_target, s.source["capture"] = str(cap["target"]), "config"
    todo = data.get("todo", {})
    if "log_into_drawer" in todo:
        s.log_into_drawer = _bool(todo["log_into_drawer"], "todo.log_into_drawer")
    if "log_states" in todo:
        s.log_states = _bool(todo["log_states"], "todo.log_states")
    if "priorities" in todo:
        pr = todo["priorities"]
        if not isinstance(pr, str) or not priority_range(pr):
            raise ConfigError(f'todo.priorities must be "HIGHEST LOWEST [DEFAULT]" as in '
                              f'#+PRIORITIES:, e.g. "A E C" or "1 9 5"; got {pr!r}')
        s.priorities = pr
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
    g = data.get("guard")
    trusted = g.get("trusted_clients") if isinstance(g, Mapping) else None
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
        s.capture_target, s.source["capture"] = env["OPENCORTEX_CAPTURE_TARGET"], "env"
    if env.get("OPENCORTEX_LOG_STATES"):
        s.log_states = _bool(env["OPENCORTEX_LOG_STATES"], "OPENCORTEX_LOG_STATES")
    if memex is not None:
        s.memex, s.source["memex"] = Path(memex).expanduser(), "flag"
    if index is not None:
        s.index, s.source["index"] = Path(index).expanduser(), "flag"
    if store:
        s.store_url, s.source["store"] = store, "flag"
    return s
