"""The core actuators (reply, memex.write, shell, delegate) and the ``capture`` write op.

They are registered like any plugin's (``register``, called by the built-ins' entry in
``skills.builtin``); other tools (web, websearch, skill.trust) and write ops (gtd, project,
save, link, skill) are registered by the skills that own them.  Each takes the approved
Action, its Signal and the kernel's ``ActEnv``; none runs signals itself."""

from __future__ import annotations

import logging
import shlex
from typing import Any

from ..guard import GuardContext
from ..guard.action import Action
from ..signal import Delegation, Signal
from .registry import ActEnv

__all__ = ["capture_op", "delegate", "memex_write", "register", "reply", "shell"]

log = logging.getLogger("opencortex")


def register(r: Any) -> None:
    """Add the core actuators through a registrar (``SkillRegistry``'s hook)."""
    r.actuator("reply", reply)
    r.actuator("memex.write", memex_write)
    r.actuator("shell", shell)
    r.actuator("delegate", delegate)
    r.write_op("capture", capture_op)


def reply(action: Action, signal: Signal, env: ActEnv) -> None:
    data = action.args.get("data")
    if action.args.get("citations") is not None:
        data = {**(data or {}), "citations": list(action.args["citations"])}
    env.reply(signal, str(action.args.get("text", "")), data)


def memex_write(action: Action, signal: Signal, env: ActEnv) -> None:
    """One write op from the table, under the memex lock, in the signal's rollback batch."""
    op = action.args.get("op")
    fn = env.table.write_op(op) if isinstance(op, str) else None
    if fn is None:
        raise ValueError(f"unknown memex write {op!r}")
    m = env.memex
    with env.memex_lock:
        m.writer.batch = env.batch_of(signal)
        try:
            text, data = fn(action, signal, env)
        finally:
            m.writer.batch = None
    env.reply(signal, text, data)


def capture_op(action: Action, signal: Signal, env: ActEnv) -> tuple[str, Any]:
    a = action.args
    r = env.memex.capture(str(a["text"]), to=a.get("to") or a["path"], todo=a.get("todo"),
                          model=True)
    return f"Captured into {r.file} ({r.node}).", r.to_dict()


def shell(action: Action, signal: Signal, env: ActEnv) -> Signal:
    res = env.guard.run_shell(action, approved=signal.meta.get("approval"),
                              context=GuardContext.of(env.memex.root))
    _mark_private_read(action, res.argv, signal, env)
    return signal.feedback("tool-output", tool="shell",
                           command=shlex.join(action.args.get("argv") or []),
                           returncode=res.returncode, text=res.stdout,
                           stderr=res.stderr, truncated=res.truncated,
                           timed_out=res.timed_out)


def _mark_private_read(action: Action, argv: tuple[str, ...], signal: Signal,
                       env: ActEnv) -> None:
    """Provenance: a command that read a file holding private notes (or a folder with one)
    taints its chain, so its output leaves only to who may see private notes (the
    egress check, ``guard.egress``) and the session record of the turn is private."""
    from pathlib import Path

    from ..guard.egress import Taint, shell_read
    from ..guard.policy import policy_of

    taint = signal.meta.get("taint")
    if not isinstance(taint, Taint):
        return
    root = Path(env.memex.root)
    cwd = Path(str(action.args.get("cwd") or root))
    why = shell_read(list(argv or action.args.get("argv") or []),
                     cwd if cwd.is_absolute() else root / cwd, root.resolve(),
                     env.memex.private_prints().files, policy_of(env.memex.settings.guard))
    if why:
        taint.mark(why)


def delegate(action: Action, signal: Signal, env: ActEnv) -> Delegation:
    """Hand the work back to the kernel loop: with ``intents`` (the router) each runs in
    order and the results are composed into one reply; without, one delegation signal."""
    intents = action.args.get("intents")
    if isinstance(intents, list):
        return Delegation(signal, intents=intents)
    return Delegation(signal, payload=dict(action.args))
