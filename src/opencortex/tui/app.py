"""The interactive chat: a prompt_toolkit prompt over a backend (kernel or daemon).

Messages run on a background thread so replies print as they stream in and the prompt
stays usable while a request waits for ``/approve``.  Keys: Enter sends; Esc-Enter (or
Meta-Enter) inserts a newline for multi-line messages; Ctrl-D or ``/exit`` quits.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .backend import Backend, BackendError

__all__ = ["HELP", "ChatApp", "format_citations", "format_hits", "history_path"]

HELP = """Commands:
  /search TEXT      search the memex (hits as file:line)
  /recollect TEXT   ask the agent to recollect TEXT
  /agenda           what's on the agenda
  /save NODE        file the last answer under NODE   /unsave  undo that save
  /links NODE       notes to link with NODE           /link N  link suggestion N
  /trust NAME       show a literate skill's code and ask to trust exactly it
  /approve ID       approve a pending action      /deny ID   deny it
  /help             this list                     /exit      quit (or Ctrl-D)
Enter sends; Esc-Enter (Meta-Enter) starts a new line."""

SETTLE = 0.05
"""Seconds to wait after an approval notice so the reply that goes with it prints first."""


def history_path() -> Path:
    """``<XDG state dir>/opencortex/chat_history``: survives restarts, per user."""
    import platformdirs

    return Path(platformdirs.user_state_dir("opencortex", appauthor=False)) / "chat_history"


def format_citations(data: Any, locate: Callable[[str], str | None]) -> list[str]:
    """Each citation as an openable link: ``file:line`` (memex-relative) and ``id:UUID``."""
    cites = data.get("citations") if isinstance(data, dict) else None
    out: list[str] = []
    for ref in cites or []:
        ref = str(ref)
        where = locate(ref)
        if ref.startswith("id:"):
            out.append(f"{where}  {ref}" if where else ref)
        else:
            out.append(where or ref)
    return out


def format_hits(res: dict[str, Any]) -> list[str]:
    hits = res.get("hits") or []
    if not hits:
        return [f"no hits for {res.get('query', '')!r}"]
    lines = []
    for h in hits:
        ident = f"  id:{h['id']}" if h.get("id") else ""
        lines.append(f"{h.get('file')}:{h.get('line')}  {h.get('title', '')}{ident}")
        if h.get("snippet"):
            lines.append(f"    {h['snippet']}")
    lines.extend(f"({n})" for n in res.get("notes") or [])
    return lines


class ChatApp:
    """One conversation (a session) against a backend; ``handle`` is the whole command
    language, so it is testable without a terminal."""

    def __init__(self, backend: Backend, session: str | None = None,
                 echo: Callable[[str], None] | None = None,
                 write: Callable[[str], None] | None = None) -> None:
        self.backend = backend
        self.write = write or (lambda s: print(s, end="", flush=True))
        """Where a model answer's words go as they stream (no newline of its own)."""
        from ..sessions.ids import new_session_id, validate_session_id

        self.session = validate_session_id(session) if session else new_session_id("tui")
        self.echo = echo or (lambda s: print(s, flush=True))
        self._announced: set[str] = set()
        self._threads: list[threading.Thread] = []

    # -- the command language -------------------------------------------------------
    def handle(self, line: str, wait: float | None = None) -> bool:
        """Act on one input; False when the person asked to leave."""
        text = line.strip()
        if not text:
            return True
        cmd, _, arg = text.partition(" ")
        arg = arg.strip()
        if cmd in ("/exit", "/quit"):
            return False
        if cmd == "/help":
            self.echo(HELP)
        elif cmd == "/search":
            if not arg:
                self.echo("usage: /search TEXT")
            else:
                self._guard(lambda: [self.echo(s) for s in
                                     format_hits(self.backend.search(arg))])
        elif cmd in ("/approve", "/deny"):
            if not arg:
                self.echo(f"usage: {cmd} ID")
            else:
                ok = cmd == "/approve"
                if self._guard(lambda: self.backend.resolve(arg, ok)):
                    self.echo(f"{'approved' if ok else 'denied'} {arg}")
        elif cmd == "/agenda":
            self.send("what's on my agenda", wait)
        else:  # /recollect TEXT and anything else go to the pipeline as typed
            self.send(text, wait)
        return True

    def _guard(self, f: Callable[[], Any]) -> bool:
        try:
            f()
            return True
        except BackendError as e:
            self.echo(f"error: {e}")
            return False

    # -- messages -------------------------------------------------------------------
    def send(self, text: str, wait: float | None = None) -> threading.Thread:
        """Start one request; return once it finished or asked for an approval (or after
        ``wait`` seconds), leaving the rest of its replies to stream in."""
        settled = threading.Event()
        shown: list[str] = []  # streamed words not yet followed by their reply

        def on_delta(piece: str) -> None:
            shown.append(piece)
            self.write(piece)

        def on_reply(t: str, data: Any) -> None:
            t = self._drop_announced(t)
            streamed = "".join(shown)
            shown.clear()
            if streamed and t.startswith(streamed):  # the verified answer is what was shown
                t = t[len(streamed):]
                self.echo(t)
            elif streamed:
                self.echo("\n" + t)
            elif not t.strip():
                return  # the approval notice already said it all
            else:
                self.echo(t)
            for c in format_citations(data, self.backend.locate):
                self.echo(f"  -> {c}")

        def on_approval(ident: str, reason: str) -> None:
            self._announced.add(ident)
            self.echo(f"[approval {ident}] {reason}\n  answer with /approve {ident} or "
                      f"/deny {ident}")
            threading.Timer(SETTLE, settled.set).start()

        def run() -> None:
            try:
                self.backend.chat(text, self.session, on_reply, on_approval, on_delta)
            except BackendError as e:
                self.echo(f"error: {e}")
            except Exception as e:  # keep the prompt alive whatever happens
                self.echo(f"error: {type(e).__name__}: {e}")
            finally:
                settled.set()

        th = threading.Thread(target=run, name="oc-tui-send", daemon=True)
        self._threads.append(th)
        th.start()
        try:
            settled.wait(wait)
        except KeyboardInterrupt:
            self.echo("(still working in the background)")
        return th

    def _drop_announced(self, text: str) -> str:
        """The reply without "Needs your approval … /approve ID" lines already shown."""
        return "\n".join(ln for ln in text.split("\n")
                         if not any(f"/approve {i} or /deny {i}" in ln
                                    for i in self._announced))

    # -- the terminal -----------------------------------------------------------------
    def run(self) -> int:
        """The prompt loop; 0 on a clean exit."""
        from prompt_toolkit import PromptSession
        from prompt_toolkit.history import FileHistory, InMemoryHistory
        from prompt_toolkit.key_binding import KeyBindings
        from prompt_toolkit.patch_stdout import patch_stdout
        from prompt_toolkit.utils import is_dumb_terminal

        kb = KeyBindings()

        @kb.add("enter")
        def _send(event: Any) -> None:
            event.current_buffer.validate_and_handle()

        @kb.add("escape", "enter")
        def _newline(event: Any) -> None:
            event.current_buffer.insert_text("\n")

        hist: Any
        try:
            path = history_path()
            path.parent.mkdir(parents=True, exist_ok=True)
            hist = FileHistory(str(path))
        except OSError:
            hist = InMemoryHistory()
        ps: PromptSession[str] = PromptSession(history=hist, key_bindings=kb, multiline=True,
                                               prompt_continuation="... ")
        self.echo(f"OpenCortex chat (session {self.session}). /help for commands.")
        # a dumb terminal has no cursor control: print straight through; otherwise keep
        # background replies above the prompt line
        with contextlib.nullcontext() if is_dumb_terminal() else patch_stdout(raw=True):
            while True:
                try:
                    line = ps.prompt("> ")
                except KeyboardInterrupt:
                    continue
                except EOFError:
                    break
                if not self.handle(line):
                    break
        return 0

    def close(self) -> None:
        self.backend.close()
        for th in self._threads:
            th.join(timeout=2)
