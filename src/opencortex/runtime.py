"""The composition root: one :class:`Runtime` per process, built from settings.

Every gateway — the CLI's ``ask``/``route``/``chat``/``telegram``, the HTTP daemon (and its
heartbeat), the MCP server, the TUI — gets its parts from a Runtime instead of wiring them
itself, so each part exists once and behaves the same everywhere::

    Settings ─► Runtime ─┬─ memex ── store, writer, retriever (embedder), lock
                         ├─ registry   (skills: built-ins, plugins, literate; built once)
                         ├─ gateway ── reasoner   (the configured model, else offline)
                         ├─ access(client)        (the guard facade, per client)
                         └─ kernel(...)           (the pipeline over all of the above)

Policies it fixes for every gateway:

- **A broken model config is one clear error.**  The ``[llm]`` table (and the
  ``OPENCORTEX_LLM_*`` override) is validated when the Runtime is built — cheaply, without
  the HTTP machinery — and a mistake raises :class:`~opencortex.errors.ConfigError` naming
  the setting, at start-up of ``ask``, ``serve``, ``chat``, ``telegram`` and ``mcp`` alike.
  No model configured is not an error: the offline reasoner answers.
- **One lock.**  The index is one connection: the memex's own ``lock`` is held around every
  memex call by the kernel's workers and heartbeat, the HTTP routes, MCP tools and the TUI.
- **Lazy.**  Nothing heavy (store, model client, retriever, embedder, skills) is built until
  first used, so ``opencortex ask`` stays fast and ``--version`` never imports this.
"""

from __future__ import annotations

import os
import threading
from typing import TYPE_CHECKING, Any

from .config import ENVIRONMENT, Settings, config_path, env, load_settings
from .errors import ConfigError
from .locking import MemexLock

if TYPE_CHECKING:
    from .access import Access
    from .llm.gateway import Gateway
    from .llm.providers import Provider
    from .memex import Memex
    from .pipeline.kernel import Kernel
    from .reason.reasoner import Reasoner
    from .retrieval.hybrid import Retriever
    from .skills.registry import SkillRegistry

__all__ = ["Runtime"]


def _providers(settings: Settings) -> tuple[Provider, ...]:
    """The model cascade from the settings; ConfigError (naming the setting) if broken.
    Nothing configured (no ``[llm]``, no ``OPENCORTEX_LLM_*``) is the offline reasoner
    without importing the model client's modules: ~20 ms of every offline ``ask``."""
    if not settings.llm.table and not any(
            env(k) for k in ENVIRONMENT if k.startswith("OPENCORTEX_LLM_")):
        return ()
    from .llm.config import options_from_config, providers_from_config

    try:
        options_from_config(settings.llm.config())  # [llm] profile / budget: checked now too
        return tuple(providers_from_config(settings.llm.config()))
    except ConfigError as e:
        raise ConfigError(f"the model settings are broken: {e} — fix [llm] in "
                          f"{config_path()} (or OPENCORTEX_LLM_*), or remove them to answer "
                          "offline; `opencortex doctor` checks them") from None


class Runtime:
    """The parts of OpenCortex for one memex, each built once, on first use."""

    def __init__(self, settings: Settings | None = None, *, memex: Memex | None = None) -> None:
        """From ``settings`` (default: every layer, :func:`~opencortex.config.load_settings`),
        or around an open ``memex`` (its settings; the caller keeps closing it)."""
        if memex is not None:
            settings = memex.settings
        self.settings: Settings = settings if settings is not None else load_settings()
        self.providers: tuple[Provider, ...] = _providers(self.settings)
        """The validated model cascade; empty: no model, the offline reasoner answers."""
        self._memex = memex
        self._owns_memex = memex is None
        self._build = threading.RLock()  # the registry reads self.memex while built
        self._registry: SkillRegistry | None = None
        self._gateway: Gateway | None = None
        self._reasoner: Reasoner | None = None
        self._kernels: list[Kernel] = []

    @classmethod
    def open(cls, memex: str | os.PathLike[str] | None = None,
             index: str | os.PathLike[str] | None = None, *,
             store: str | None = None) -> Runtime:
        """The Runtime for command-line flags (``--memex``, ``--index``, ``--store``)."""
        return cls(load_settings(memex=memex, index=index, store=store))

    # -- the parts -----------------------------------------------------------------------
    @property
    def memex(self) -> Memex:
        """The memex (its index store opens on first use)."""
        if self._memex is None:
            from .memex import Memex

            with self._build:
                if self._memex is None:
                    self._memex = Memex(settings=self.settings)
        return self._memex

    @property
    def store(self) -> Any:
        """The index store (SQLite or PostgreSQL, per ``[store] url``)."""
        return self.memex.store

    @property
    def lock(self) -> MemexLock:
        """The one lock every gateway holds around memex calls (the memex's own)."""
        return self.memex.lock

    @property
    def registry(self) -> SkillRegistry:
        """Every skill (built-ins, plugins, trusted literate ones), loaded once."""
        if self._registry is None:
            from .skills.default import default_registry

            with self._build:
                if self._registry is None:
                    self._registry = default_registry(self.memex.root)
        return self._registry

    @property
    def gateway(self) -> Gateway | None:
        """The model client for the configured cascade; None when no model is configured."""
        if not self.providers:
            return None
        if self._gateway is None:
            from .llm.gateway import Gateway

            try:
                from .guard.secrets import redact
            except ImportError:  # pragma: no cover - the guard ships with OpenCortex
                redact = None  # type: ignore[assignment]
            from .llm.config import options_from_config

            profile, budget = options_from_config(self.settings.llm.config())
            with self._build:
                if self._gateway is None:
                    self._gateway = Gateway(self.providers, redact=redact, profile=profile,
                                            budget=budget)
        return self._gateway

    @property
    def reasoner(self) -> Reasoner:
        """The kernel's reasoner: the model when configured, else the offline one."""
        if self._reasoner is None:
            from .reason.reasoner import Reasoner

            self._reasoner = Reasoner(self.gateway)
        return self._reasoner

    @property
    def via(self) -> str:
        """``model`` or ``offline``: who answers requests."""
        return "model" if self.providers else "offline"

    @property
    def retriever(self) -> Retriever:
        """The memex's hybrid retriever (keyword index, vectors, embedder stay loaded)."""
        from .retrieval.hybrid import retriever_for

        return retriever_for(self.memex)

    @property
    def embedder(self) -> Any:
        """The sentence embedder (``[retrieval] embedder``), loaded on first use."""
        return self.retriever.embedder

    def access(self, client: str) -> Access:
        """The guard facade for one client ("cli", "tui", "http", "mcp", "telegram", …):
        its privacy, policy and confinement, under the one lock, recall with the model."""
        from .access import Access

        return Access(self.memex, client, lock=self.lock,
                      gateway=self.gateway if self.gateway is not None else False)

    def kernel(self, *, approval_timeout: float | None = None, workers: int = 4,
               **options: Any) -> Kernel:
        """A pipeline over this Runtime's memex, skills and reasoner (shut it down, or
        :meth:`close` the Runtime).  ``approval_timeout``: seconds an "ask" action waits
        for the person (0: report it, do not wait)."""
        from .pipeline.kernel import Kernel

        k = Kernel(self.memex, registry=self.registry, reasoner=self.reasoner,
                   workers=workers, **options)
        if approval_timeout is not None:
            k.approval_timeout = approval_timeout
        self._kernels.append(k)
        return k

    # -- lifetime ------------------------------------------------------------------------
    def close(self, timeout: float = 5.0) -> None:
        """Shut down the kernels it built; close the memex if it opened it — at once, or,
        when a request is still running after ``timeout`` (a slow model's answer), as soon
        as the last one ends: a late answer must find its store open, not fail with "Cannot
        operate on a closed database" in front of the person."""
        busy = []
        for k in self._kernels:
            for p in k.approvals.pending():  # let waiting requests finish now
                try:
                    k.approvals.cancel(p.id, by="shutdown")
                except Exception:  # already answered meanwhile
                    pass
            if not k.shutdown(timeout=timeout):
                busy.append(k)
        self._kernels.clear()
        if not (self._owns_memex and self._memex is not None):
            return
        memex = self._memex
        if not busy:
            memex.close()
            return
        left = [len(busy)]
        guard = threading.Lock()

        def one_idle() -> None:
            with guard:
                left[0] -= 1
                last = left[0] == 0
            if last:
                memex.close()

        for k in busy:
            k.when_idle(one_idle)

    def __enter__(self) -> Runtime:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Runtime(memex={str(self.settings.memex)!r}, via={self.via})"
