"""``/trust NAME`` in chat (TUI, HTTP, Telegram, Emacs through the daemon): ask the person to
approve a literate skill's exact code.  It proposes a ``skill.trust`` action carrying the
file's current bytes and their sha256; the guard always asks (the approval shows the code
and its diff against the last trusted version), and the actuator records the trust only
after ``/approve`` — if the file still holds those bytes."""

from __future__ import annotations

import re

from .base import Action, Context, Proposal, Rejection, Skill

__all__ = ["TARGET", "skill"]

TARGET = "skill-trust"
_CMD = re.compile(r"^\s*/trust(?:-skill)?\s+(?P<name>\S+)\s*$", re.I)
PERSON_SENSORS = ("user-input", "chat-message")
"""Only the person types this; an ``@agent`` line in a note (user-command) never asks."""


def _name(ctx: Context) -> str | None:
    s = ctx.signal
    if s.type != "request" or s.sensor not in PERSON_SENSORS:
        return None
    m = _CMD.match(ctx.text)
    return m.group("name") if m else None


def _offline(ctx: Context) -> Proposal:
    return {"action": "skill.trust", "name": _name(ctx) or ""}


def _symbolic(p: Proposal, ctx: Context) -> Action | Rejection | None:
    from ..errors import OpenCortexError
    from ..guard.trust import find_skill

    if p.get("action") != "skill.trust":
        return None
    try:
        sf = find_skill(ctx.memex.root, str(p.get("name") or ""))
    except OpenCortexError as e:
        return Rejection(str(e))
    from ..guard.trust import TrustStore

    prev = TrustStore().get(ctx.memex.root, sf.rel)
    if prev is not None and prev.sha256 == sf.sha256:
        return Action("reply", {"text": f"{sf.rel} is already trusted (sha256 "
                                        f"{sf.sha256[:16]}…)."}, origin=TARGET)
    args = {"name": sf.name, "path": sf.rel, "sha256": sf.sha256, "text": sf.text}
    if prev is not None:
        args["previous"] = prev.text
    return Action("skill.trust", args, origin=TARGET)


def skill() -> Skill:
    return Skill(TARGET, 95, trigger=lambda c: _name(c) is not None, offline=_offline,
                 symbolic=_symbolic, tools=["skill.trust"],
                 description="/trust NAME: approve a literate skill's exact code (shows it "
                             "and the diff against the version you trusted before).")
