"""Gemini CLI chats: ``~/.gemini/tmp/<project_hash>/chats/`` — legacy ``session-*.json``
objects and newer ``.jsonl`` logs (metadata line, message upserts by id, ``$set`` metadata
patches, ``$rewindTo`` truncations) replayed in order, as the CLI itself does."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from ..records import (
    Origin,
    Receipt,
    Record,
    Snapshot,
    State,
    Turn,
    failed_record,
    guarded,
    head_line,
    is_entry,
    jsonl_lines,
    parse_time,
    shell_handle,
)

__all__ = ["EXTRACTOR", "SOURCE", "default_roots", "discover", "read"]

SOURCE = "gemini"
EXTRACTOR = "opencortex.recall.gemini@1"
_ORIGIN: dict[str, Origin] = {"user": "person", "gemini": "assistant", "model": "assistant",
                              "info": "injected", "error": "injected", "warning": "injected"}


def default_roots() -> list[Path]:
    env = os.environ.get("GEMINI_CLI_HOME")
    base = Path(env).expanduser() if env else Path.home()
    return [base / ".gemini"]


def discover(roots: list[Path] | None = None) -> list[Path]:
    """Chat files under ``<root>/tmp/*/chats/`` (a root may also be a chats dir itself)."""
    found: list[Path] = []
    for root in roots if roots is not None else default_roots():
        root = Path(root)
        dirs = [root] if root.name == "chats" else sorted((root / "tmp").glob("*/chats"))
        for d in dirs:
            if d.is_dir():
                found.extend(sorted(p for p in d.rglob("*") if is_entry(p)
                                    and p.suffix in (".json", ".jsonl")))
    return found


def _root_of(path: Path) -> str:
    for parent in path.parents:
        if parent.name == "tmp" and parent.parent.name == ".gemini":
            return str(parent.parent)
    return str(path.parent)


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(_text(c) for c in content if _text(c))
    if isinstance(content, dict):
        return str(content.get("text") or "")
    return ""


def _turns(messages: list[tuple[dict[str, Any], str]]) -> tuple[list[Turn], int]:
    """Turns from (message, locator) pairs; returns them and the chars of thoughts left out."""
    turns: list[Turn] = []
    omitted = 0
    for msg, loc in messages:
        ts = parse_time(msg.get("timestamp"))
        origin: Origin = _ORIGIN.get(str(msg.get("type")), "unknown")
        text = _text(msg.get("content"))
        if text.strip():
            turns.append(Turn(len(turns), origin, text, ts, loc))
        for thought in msg.get("thoughts") or []:
            if isinstance(thought, dict):
                omitted += len(str(thought.get("description") or ""))
        for call in msg.get("toolCalls") or []:
            if not isinstance(call, dict):
                continue
            args = json.dumps(call.get("args"), ensure_ascii=False, sort_keys=True)
            body = f"{call.get('name', '?')}: {args}"
            result = call.get("resultDisplay") or _text(call.get("result"))
            if result:
                body += f"\n{result if isinstance(result, str) else json.dumps(result)}"
            turns.append(Turn(len(turns), "tool", body, ts, loc))
    return turns, omitted


def _record(snap: Snapshot, meta: dict[str, Any], messages: list[tuple[dict[str, Any], str]],
            skipped: int | None) -> Record:
    path = snap.path
    root = _root_of(path)
    turns, omitted = _turns(messages)
    sid = str(meta.get("sessionId") or path.stem)
    times = [t.timestamp for t in turns if t.timestamp]
    first_person = next((t for t in turns if t.origin == "person"), None)
    dirs = meta.get("directories")
    cwd = dirs[0] if isinstance(dirs, list) and dirs and isinstance(dirs[0], str) else None
    state: State = "succeeded" if turns else ("empty" if not skipped else "validation_failed")
    receipt = Receipt(source=SOURCE, root=root, session_id=sid, locator=str(path),
                      revision=snap.revision, sha256=snap.sha256, extractor=EXTRACTOR,
                      state=state, skipped_lines=skipped, unverified_person_turns=None,
                      omitted_chars=omitted)
    title = meta.get("summary") if isinstance(meta.get("summary"), str) else None
    rec = Record(source=SOURCE, session_id=sid, root=root, locator=str(path),
                 title=title or (head_line(first_person.text) if first_person else None),
                 cwd=cwd, branch=None,
                 started=parse_time(meta.get("startTime")) or (min(times) if times else None),
                 ended=parse_time(meta.get("lastUpdated")) or (max(times) if times else None),
                 turns=turns, handle=shell_handle(["gemini", "--resume", sid], cwd),
                 receipt=receipt)
    if meta.get("projectHash"):
        rec.extra["project_hash"] = str(meta["projectHash"])
    return rec


def _parse_json(snap: Snapshot) -> list[Record]:
    try:
        data = json.loads(snap.data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        return [failed_record(SOURCE, EXTRACTOR, snap.path, _root_of(snap.path),
                              "validation_failed", f"not JSON: {e}", snap)]
    if not isinstance(data, dict) or not isinstance(data.get("messages", []), list):
        return [failed_record(SOURCE, EXTRACTOR, snap.path, _root_of(snap.path),
                              "validation_failed", "not a Gemini conversation object", snap)]
    msgs = [(m, f"{snap.path}#{m.get('id', i)}")
            for i, m in enumerate(data.get("messages", [])) if isinstance(m, dict)]
    rec = _record(snap, data, msgs, None)  # not line-based: skipped lines unmeasured
    return [rec]


def _parse_jsonl(snap: Snapshot) -> list[Record]:
    meta: dict[str, Any] = {}
    order: list[str] = []
    messages: dict[str, tuple[dict[str, Any], str]] = {}
    skipped = 0
    first = True

    def upsert(msg: dict[str, Any], loc: str) -> None:
        mid = str(msg["id"])
        if mid not in messages:
            order.append(mid)
        messages[mid] = (msg, loc)

    for n, obj in jsonl_lines(snap.data):
        loc = f"{snap.path}:{n}"
        if not isinstance(obj, dict):
            skipped += 1
            first = False
            continue
        if "$rewindTo" in obj:
            target = str(obj["$rewindTo"])
            if target in order:  # drop that message and everything after it
                for mid in order[order.index(target):]:
                    del messages[mid]
                del order[order.index(target):]
            else:
                skipped += 1
        elif "$set" in obj:
            patch = obj["$set"]
            if not isinstance(patch, dict):
                skipped += 1
                continue
            # messages in a patch are upserted, not used to clear history: compression
            # rewrites the model's context, but recall wants what was actually said
            for m in patch.get("messages") or []:
                if isinstance(m, dict) and "id" in m:
                    upsert(m, loc)
            meta.update({k: v for k, v in patch.items() if k != "messages"})
        elif "id" in obj and "type" in obj:
            upsert(obj, loc)
        elif first:
            meta.update({k: v for k, v in obj.items() if k != "messages"})
            for m in obj.get("messages") or []:
                if isinstance(m, dict) and "id" in m:
                    upsert(m, loc)
        else:
            skipped += 1
        first = False
    return [_record(snap, meta, [messages[m] for m in order], skipped)]


def _parse(snap: Snapshot) -> list[Record]:
    return _parse_jsonl(snap) if snap.path.suffix == ".jsonl" else _parse_json(snap)


read = guarded(SOURCE, EXTRACTOR, _root_of, _parse)
