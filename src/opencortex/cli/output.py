"""Shared CLI plumbing: the common options, JSON vs human output, errors with the fix."""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

import click

from ..errors import OpenCortexError

if TYPE_CHECKING:
    from rich.progress import Progress, TaskID

    from ..memory.nodes import Node

__all__ = ["answer_jsonl", "cli_settings", "common_options", "emit", "fail", "node_line",
           "open_memex", "open_runtime", "progress_bar", "store_flag"]


def common_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """--memex, --index and --json on a command; OpenCortex errors become clean exits."""

    @click.option("--memex", "memex", type=click.Path(file_okay=False), default=None,
                  help="Memex folder (default: config, $OPENCORTEX_MEMEX, ~/memex).")
    @click.option("--index", "index", type=click.Path(dir_okay=False), default=None,
                  help="Index database (default: under the XDG cache dir).")
    @click.option("--json", "json_", is_flag=True, help="Machine-readable JSON output.")
    @functools.wraps(f)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return f(*args, **kwargs)
        except OpenCortexError as e:
            fail(str(e), kwargs.get("json_", False), type(e).__name__, status=e.status)

    return wrapper


def fail(message: str, as_json: bool, kind: str = "error", code: int = 1,
         status: int = 400) -> None:
    """Exit with ``message``; under ``--json`` as the one error body the HTTP API uses too
    (``ok``, ``error``, ``type``, ``status``: opencortex.errors.error_body)."""
    if as_json:
        from ..errors import error_body

        click.echo(json.dumps(error_body(message, status, kind)))
    else:
        click.echo(f"Error: {message}", err=True)
    sys.exit(code)


def store_flag() -> str | None:
    """The group's ``--store URL`` (``opencortex --store URL CMD``), if given."""
    ctx = click.get_current_context(silent=True)
    return ctx.find_root().params.get("store") if ctx is not None else None


def cli_settings(memex: str | None, index: str | None):  # -> Settings
    """The settings for this command's flags (``--memex``, ``--index``, the group's
    ``--store``) over config and environment."""
    from ..config import load_settings

    return load_settings(memex=memex, index=index, store=store_flag())


def open_memex(memex: str | None, index: str | None):  # -> Memex (imported lazily)
    from ..memex import Memex

    return Memex(settings=cli_settings(memex, index))


def open_runtime(memex: str | None, index: str | None):  # -> Runtime (imported lazily)
    """The composition root for an agent command (ask, chat, serve, telegram, mcp): a
    broken [llm] config is a ConfigError here, before anything starts."""
    from ..runtime import Runtime

    return Runtime(cli_settings(memex, index))


def emit(data: Any, as_json: bool, human: Callable[[], None]) -> None:
    if as_json:
        click.echo(json.dumps(data, ensure_ascii=False, indent=None, default=str))
    else:
        human()


def answer_jsonl(lines: Iterable[str], field: str, answer: Callable[[str], Any]) -> None:
    """For ``--queries FILE``: one JSON result line per input line, in order; a line that
    is not JSON with ``field`` gets an error line (so outputs stay aligned with inputs)."""
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)[field]
        except (ValueError, KeyError, TypeError):
            click.echo(json.dumps({"line": n, "error": f"not JSON with a {field!r} field"}))
            continue
        click.echo(json.dumps(answer(str(value)), ensure_ascii=False, default=str))
        sys.stdout.flush()


def node_line(n: Node) -> str:
    todo = f"{n.todo} " if n.todo else ""
    prio = f"[#{n.priority}] " if n.priority else ""
    tags = f"  :{':'.join(n.local_tags)}:" if n.local_tags else ""
    where = click.style(f"{n.file}:{n.line}", fg="cyan")
    return f"{where}  {'*' * n.level} {todo}{prio}{n.title}{tags}"


def print_nodes(nodes: Iterable[Any]) -> None:
    for n in nodes:
        click.echo(node_line(n))


class progress_bar:
    """A rich progress bar on stderr when it is a terminal; a no-op otherwise."""

    def __init__(self, label: str) -> None:
        self.label = label
        self._p: Progress | None = None
        self._task: TaskID | None = None

    def __enter__(self) -> Callable[[int, int], None]:
        from ..config import env

        if sys.stderr.isatty() and not env("OPENCORTEX_NO_PROGRESS"):
            from rich.console import Console
            from rich.progress import Progress

            self._p = Progress(console=Console(stderr=True), transient=True)
            self._p.start()
        return self.update

    def update(self, done: int, total: int) -> None:
        if self._p is None:
            return
        if self._task is None:
            self._task = self._p.add_task(self.label, total=total)
        self._p.update(self._task, completed=done)

    def __exit__(self, *exc: object) -> None:
        if self._p is not None:
            self._p.stop()
