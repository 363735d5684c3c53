"""``opencortex init``: set up a memex, identity, model provider, daemon token and the
Emacs snippet — interactively, or with ``--yes`` from flags and defaults.  Idempotent:
existing settings and files are kept unless a flag says otherwise."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import click

from .output import emit, fail

SKELETON = {
    "inbox.org": "#+TITLE: Inbox\n#+FILETAGS: :inbox:\n",
    "gtd.org": ("#+TITLE: Getting things done\n#+TODO: TODO NEXT WAITING | DONE CANCELLED\n\n"
                "* Inbox\n* Next actions\n* Waiting for\n* Someday / maybe\n"),
    "notes/README.org": "#+TITLE: Notes\n\nOne atomic note per file; link them with [[id:...]].\n",
    "projects/README.org": "#+TITLE: Projects\n\nOne folder per project (opencortex can "
                           "scaffold them).\n",
    "journal/README.org": "#+TITLE: Journal\n",
    "skills/README.org": "#+TITLE: Skills\n\nLiterate skills: Org files whose python blocks "
                         "define SKILL = Skill(...).\n",
}

NO_TERMINAL = (
    "init asks its questions on a terminal, and there is none (input ended): pass the answers "
    "as flags with --yes, e.g. `opencortex init --yes --memex ~/memex --name agent` (add "
    "`--provider ollama --model qwen2.5:3b` for a model; --provider none by default)")
"""What a non-interactive ``init`` without --yes says instead of click's bare "Aborted!"."""

EMACS_SNIPPET = """;; in your init.el
(add-to-list 'load-path "{repo}/editors/emacs")
(require 'opencortex)
(setq opencortex-url "http://127.0.0.1:{port}"
      opencortex-memex-directory "{memex}")
(opencortex-global-mode 1)"""


def _toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int | float):
        return str(v)
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{k} = {_toml_value(x)}" for k, x in v.items()) + " }"
    if isinstance(v, list):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    return json.dumps(str(v), ensure_ascii=False)  # a TOML basic string


def render_toml(data: dict[str, Any]) -> str:
    """Top-level keys, then one [table] (or [a.b]) per nested dict of plain values."""
    lines = [f"{k} = {_toml_value(v)}" for k, v in data.items() if not isinstance(v, dict)]

    def tables(prefix: str, d: dict[str, Any]) -> None:
        inline = ("models",)  # small dicts written as inline tables
        plain = {k: v for k, v in d.items() if not isinstance(v, dict) or k in inline}
        if plain:
            lines.append(f"\n[{prefix}]")
            lines.extend(f"{k} = {_toml_value(v)}" for k, v in plain.items())
        for k, v in d.items():
            if isinstance(v, dict) and k not in plain:
                tables(f"{prefix}.{k}", v)

    for k, v in data.items():
        if isinstance(v, dict):
            tables(k, v)
    return "\n".join(lines) + "\n"


def probe(base_url: str, timeout: float = 3.0) -> str:
    """'reachable (N models)' or why not — GET {base_url}/models."""
    import urllib.error
    import urllib.request

    try:
        with urllib.request.urlopen(base_url.rstrip("/") + "/models", timeout=timeout) as r:
            data = json.loads(r.read(1_000_000) or b"{}")
            return f"reachable ({len(data.get('data', []))} models)"
    except urllib.error.HTTPError as e:
        return f"answers HTTP {e.code} (a key may be needed)"
    except (OSError, ValueError) as e:
        return f"not reachable ({getattr(e, 'reason', e)})"


@click.command()
@click.option("--memex", "memex", type=click.Path(file_okay=False), default=None,
              help="Where your Org files live (default ~/memex).")
@click.option("--name", default=None, help="The agent's name (for @<name> headlines).")
@click.option("--provider", default=None,
              help="Model preset: none, ollama, llamacpp, vllm, openrouter, openai, groq, gemini.")
@click.option("--model", default=None, help="Model name for the provider (fast tier).")
@click.option("--yes", "-y", is_flag=True, help="Non-interactive: flags and defaults.")
@click.option("--json", "json_", is_flag=True)
def init(memex: str | None, name: str | None, provider: str | None, model: str | None,
         yes: bool, json_: bool) -> None:
    """Set up OpenCortex (safe to run again)."""
    from ..config import config_path, load_settings
    from ..llm.providers import PRESETS
    from ..server.auth import load_or_create_token

    cfg = config_path()
    current = load_settings()
    data: dict[str, Any] = dict(current.data)

    def prompt(text: str, **kw: Any) -> Any:
        try:
            return click.prompt(text, err=True, **kw)
        except click.Abort:
            if sys.stdin is not None and sys.stdin.isatty():
                raise  # the person pressed Ctrl-C / Ctrl-D at the terminal
            fail(NO_TERMINAL, json_, "UsageError", code=2)

    def ask(text: str, default: str) -> str:
        return default if yes else prompt(text, default=default)

    root = Path(ask("Memex folder", memex or str(data.get("memex") or "~/memex"))).expanduser()
    data["memex"] = str(root)
    ident = dict(data.get("identity") or {})
    ident["name"] = ask("Agent name", name or ident.get("name") or "agent")
    data["identity"] = ident
    choice = (provider or ("none" if yes else prompt(
        "Model provider", default="none", type=click.Choice(["none", *PRESETS])))).lower()
    probe_result = None
    if choice != "none":
        if choice not in PRESETS:
            raise click.UsageError(f"unknown provider {choice!r}: one of none, {', '.join(PRESETS)}")
        mdl = model or ask("Model name (fast tier)", "")
        if not mdl:
            raise click.UsageError("a provider needs --model (e.g. qwen2.5:3b for ollama)")
        llm = dict(data.get("llm") or {})
        providers = dict(llm.get("providers") or {})
        providers[choice] = {"preset": choice, "models": {"fast": mdl, "smart": mdl}}
        llm["providers"] = providers
        data["llm"] = llm
        probe_result = probe(str(PRESETS[choice]["base_url"]))
    created = []
    root.mkdir(parents=True, exist_ok=True)
    if not any(p.suffix == ".org" for p in root.rglob("*.org")):
        for rel, text in SKELETON.items():
            p = root / rel
            if not p.exists():
                p.parent.mkdir(parents=True, exist_ok=True)
                p.write_text(text, encoding="utf-8")
                created.append(rel)
    cfg.parent.mkdir(parents=True, exist_ok=True)
    tmp = cfg.with_name(cfg.name + ".tmp")
    tmp.write_text("# written by `opencortex init`; edit freely\n" + render_toml(data),
                   encoding="utf-8")
    os.replace(tmp, cfg)
    load_settings()  # the file we wrote must load
    _token, where = load_or_create_token()
    repo = Path(__file__).resolve().parents[3]
    port = int((data.get("server") or {}).get("port", 8765))
    snippet = EMACS_SNIPPET.format(repo=repo, port=port, memex=root)
    out = {"config": str(cfg), "memex": str(root), "created": created,
           "identity": ident["name"], "provider": choice, "probe": probe_result,
           "token_file": where, "emacs": snippet}

    def human() -> None:
        click.echo(f"config   {cfg}")
        click.echo(f"memex    {root}" + (f" (created {', '.join(created)})" if created else ""))
        click.echo(f"name     @{ident['name']}")
        click.echo(f"model    {choice}" + (f": {probe_result}" if probe_result else
                                            " (offline reasoner)"))
        click.echo(f"token    {where} (`opencortex token` prints it)")
        click.echo("\n" + snippet)

    emit(out, json_, human)
