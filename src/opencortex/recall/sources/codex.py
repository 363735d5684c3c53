"""Codex CLI rollouts: ``<root>/sessions/YYYY/MM/DD/rollout-<ts>-<uuid>.jsonl``.

Codex injects AGENTS.md, environment context and similar envelopes as role=user messages;
those are "injected", not the person. ``event_msg user_message`` mirrors what the person
really typed, so person turns it does not confirm are counted as unverified."""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from pathlib import Path
from typing import Any

from ..records import (
    Origin,
    Receipt,
    Record,
    Snapshot,
    State,
    Turn,
    find_files,
    guarded,
    head_line,
    jsonl_lines,
    parse_time,
    shell_handle,
)

__all__ = ["EXTRACTOR", "SOURCE", "default_roots", "discover", "is_injected", "read"]

SOURCE = "codex"
EXTRACTOR = "opencortex.recall.codex@1"
_KNOWN = {"session_meta", "response_item", "turn_context", "event_msg", "compacted"}
_INJECTED_PREFIXES = ("# AGENTS.md instructions", "<environment_context>", "<user_instructions>",
                      "<turn_aborted>", "<user_shell_command>", "<permissions instructions>",
                      "<INSTRUCTIONS>", "<developer_instructions>")
# a whole message wrapped in one tag, e.g. <some_context>…</some_context>
_ENVELOPE = re.compile(r"\A\s*<([A-Za-z_][\w -]*)>.*</\1>\s*\Z", re.S)
_TOOL_ITEMS = {"function_call", "function_call_output", "local_shell_call", "web_search_call",
               "custom_tool_call", "custom_tool_call_output"}


def default_roots() -> list[Path]:
    env = os.environ.get("CODEX_HOME")
    return [Path(env).expanduser()] if env else [Path.home() / ".codex"]


def discover(roots: list[Path] | None = None) -> list[Path]:
    """Rollouts under ``sessions/`` and ``archived_sessions/`` of each root."""
    found: list[Path] = []
    for root in roots if roots is not None else default_roots():
        for sub in ("sessions", "archived_sessions"):
            d = Path(root) / sub
            if d.is_dir():
                found.extend(find_files(d, "rollout-*.jsonl"))
    return found


def _root_of(path: Path) -> str:
    for parent in path.parents:
        if parent.name in ("sessions", "archived_sessions"):
            return str(parent.parent)
    return str(path.parent)


def is_injected(text: str) -> bool:
    """Text Codex put in a user message on the person's behalf."""
    s = text.lstrip()
    return s.startswith(_INJECTED_PREFIXES) or bool(_ENVELOPE.match(s))


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    parts = []
    for c in content:
        if isinstance(c, dict) and isinstance(c.get("text"), str):
            parts.append(c["text"])
        elif isinstance(c, str):
            parts.append(c)
    return "\n".join(parts)


def _tool_text(p: dict[str, Any]) -> str:
    kind = p.get("type")
    if kind == "function_call" or kind == "custom_tool_call":
        return f"{p.get('name', '?')}: {p.get('arguments', p.get('input', ''))}"
    if kind in ("function_call_output", "custom_tool_call_output"):
        out = p.get("output")
        if isinstance(out, dict):
            out = out.get("content", json.dumps(out, ensure_ascii=False))
        return str(out if out is not None else "")
    if kind == "local_shell_call":
        action = p.get("action") or {}
        cmd = action.get("command") if isinstance(action, dict) else None
        return "shell: " + (" ".join(map(str, cmd)) if isinstance(cmd, list) else str(cmd))
    if kind == "web_search_call":
        return "web_search: " + json.dumps(p.get("action"), ensure_ascii=False)
    return json.dumps(p, ensure_ascii=False)[:2000]


def _norm(text: str) -> str:
    return " ".join(text.split())


def _parse(snap: Snapshot) -> list[Record]:
    path = snap.path
    root = _root_of(path)
    loc = str(path)
    skipped = omitted = 0
    meta: dict[str, Any] = {}
    cwd: str | None = None
    times = []
    raw: list[tuple[Origin, str, Any, int]] = []
    mirrored: Counter[str] = Counter()
    saw_mirror = False

    for n, obj in jsonl_lines(snap.data):
        if not isinstance(obj, dict) or not isinstance(obj.get("payload"), dict):
            skipped += 1
            continue
        kind, p = obj.get("type"), obj["payload"]
        ts = parse_time(obj.get("timestamp"))
        if ts:
            times.append(ts)
        if kind not in _KNOWN:
            skipped += 1
        elif kind == "session_meta":
            meta = meta or p
            cwd = cwd or p.get("cwd")
        elif kind == "turn_context":
            cwd = p.get("cwd") or cwd  # the directory can change mid-session: keep the last
        elif kind == "event_msg":
            if p.get("type") == "user_message" and isinstance(p.get("message"), str):
                saw_mirror = True
                mirrored[_norm(p["message"])] += 1
        elif kind == "compacted":
            if isinstance(p.get("message"), str) and p["message"].strip():
                raw.append(("injected", p["message"], ts, n))
        else:  # response_item
            ptype = p.get("type")
            if ptype == "message":
                text = _content_text(p.get("content"))
                role = p.get("role")
                if not text.strip():
                    continue
                if role == "user":
                    raw.append(("injected" if is_injected(text) else "person", text, ts, n))
                elif role == "assistant":
                    raw.append(("assistant", text, ts, n))
                elif role in ("developer", "system"):
                    raw.append(("injected", text, ts, n))
                else:
                    raw.append(("unknown", text, ts, n))
            elif ptype in _TOOL_ITEMS:
                raw.append(("tool", _tool_text(p), ts, n))
            elif ptype == "reasoning":
                summary = p.get("summary")
                if isinstance(summary, list):
                    omitted += sum(len(s.get("text", "")) for s in summary if isinstance(s, dict))
            else:
                skipped += 1

    unverified: int | None = None
    if saw_mirror:
        unverified = 0
        for origin, text, _, _ in raw:
            if origin == "person":
                key = _norm(text)
                if mirrored[key] > 0:
                    mirrored[key] -= 1
                else:
                    unverified += 1
    turns = [Turn(i, o, t, ts, f"{loc}:{n}") for i, (o, t, ts, n) in enumerate(raw)]
    sid = str(meta.get("id") or path.stem)
    git = v if isinstance(v := meta.get("git"), dict) else {}
    first_person = next((t for t in turns if t.origin == "person"), None)
    state: State = "succeeded" if turns else ("empty" if skipped == 0 else "validation_failed")
    receipt = Receipt(source=SOURCE, root=root, session_id=sid, locator=loc,
                      revision=snap.revision, sha256=snap.sha256, extractor=EXTRACTOR,
                      state=state, skipped_lines=skipped, unverified_person_turns=unverified,
                      omitted_chars=omitted)
    rec = Record(source=SOURCE, session_id=sid, root=root, locator=loc,
                 title=head_line(first_person.text) if first_person else None,
                 cwd=cwd, branch=git.get("branch"),
                 started=parse_time(meta.get("timestamp")) or (min(times) if times else None),
                 ended=max(times) if times else None, turns=turns,
                 handle=shell_handle(["codex", "resume", sid], cwd), receipt=receipt,
                 parent_id=meta.get("forked_from_id"))
    if meta.get("cli_version"):
        rec.extra["cli_version"] = str(meta["cli_version"])
    return [rec]


read = guarded(SOURCE, EXTRACTOR, _root_of, _parse)
