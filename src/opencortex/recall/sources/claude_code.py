"""Claude Code sessions: ``<root>/projects/<slug>/<session>.jsonl`` plus subagent files.

Only real person turns count as "person": tool results, meta lines, compaction summaries,
``<command…>``/hook envelopes and interrupt markers arrive as type=user but are not the
person's words. Streamed assistant chunks repeat one message; they are merged by
``message.id`` + ``requestId`` so nothing is shown twice."""

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
    find_files,
    guarded,
    head_line,
    jsonl_lines,
    parse_time,
    shell_handle,
)

__all__ = ["EXTRACTOR", "SOURCE", "default_roots", "discover", "read"]

SOURCE = "claude-code"
EXTRACTOR = "opencortex.recall.claude_code@1"
# types we understand but that carry no turn; anything else is counted as skipped
_QUIET = {"system", "file-history-snapshot", "progress", "summary", "custom-title",
          "queue-operation", "attachment"}
_CONTROL = ("[Request interrupted by user", "[Request cancelled by user")


def default_roots() -> list[Path]:
    env = os.environ.get("CLAUDE_CONFIG_DIR")
    if env:
        return [Path(env).expanduser()]
    home = Path.home()
    return [home / ".claude", home / ".config" / "claude"]


def discover(roots: list[Path] | None = None) -> list[Path]:
    """Session and subagent files under each root's ``projects/``."""
    found: list[Path] = []
    for root in roots if roots is not None else default_roots():
        projects = Path(root) / "projects"
        if projects.is_dir():
            found.extend(find_files(projects, "*.jsonl"))
    return found


def _root_of(path: Path) -> str:
    for parent in path.parents:
        if parent.name == "projects":
            return str(parent.parent)
    return str(path.parent)


def _is_default_root(root: str) -> bool:
    home = Path.home()
    return Path(root) in (home / ".claude", home / ".config" / "claude")


def _is_subagent(path: Path) -> bool:
    return path.name.startswith("agent-") or path.parent.name == "subagents"


def _block_text(block: Any) -> tuple[str, str]:
    """(kind, text) for one content block; kind is text|thinking|tool_use|tool_result|other."""
    if isinstance(block, str):
        return "text", block
    if not isinstance(block, dict):
        return "other", ""
    kind = block.get("type")
    if kind == "text":
        return "text", str(block.get("text") or "")
    if kind == "thinking":
        return "thinking", str(block.get("thinking") or "")
    if kind == "tool_use":
        args = json.dumps(block.get("input"), ensure_ascii=False, sort_keys=True)
        return "tool_use", f"{block.get('name', '?')}: {args}"
    if kind == "tool_result":
        content = block.get("content")
        if isinstance(content, list):
            content = "\n".join(_block_text(b)[1] for b in content)
        prefix = "error: " if block.get("is_error") else ""
        return "tool_result", prefix + str(content if content is not None else "")
    return "other", ""


def _user_origin(obj: dict[str, Any], text: str, subagent: bool) -> Origin:
    if subagent:  # a subagent's "user" is the parent agent's prompt, never the person
        return "injected"
    if obj.get("isMeta") or obj.get("isCompactSummary"):
        return "injected"
    stripped = text.lstrip()
    if stripped.startswith("<") or stripped.startswith(_CONTROL):
        return "injected"
    return "person"


def _parse(snap: Snapshot) -> list[Record]:
    path = snap.path
    root = _root_of(path)
    loc = str(path)
    subagent = _is_subagent(path)
    skipped = 0
    omitted = 0
    session_id = cwd = branch = agent_id = None
    titles: list[tuple[str, str | None]] = []  # (summary, leafUuid)
    uuids: set[str] = set()
    times = []
    # turns under construction: [origin, [texts], timestamp, line]
    pending: list[list[Any]] = []
    streamed: dict[tuple[str, str], tuple[int, set[str]]] = {}

    for n, obj in jsonl_lines(snap.data):
        if not isinstance(obj, dict):
            skipped += 1
            continue
        kind = obj.get("type")
        session_id = session_id or obj.get("sessionId")
        cwd = cwd or obj.get("cwd")
        branch = branch or obj.get("gitBranch")
        agent_id = agent_id or obj.get("agentId")
        subagent = subagent or bool(obj.get("isSidechain"))
        if isinstance(obj.get("uuid"), str):
            uuids.add(obj["uuid"])
        ts = parse_time(obj.get("timestamp"))
        if ts:
            times.append(ts)
        if kind == "summary":
            if isinstance(obj.get("summary"), str):
                titles.append((obj["summary"], obj.get("leafUuid")))
            continue
        if kind not in ("user", "assistant"):
            if kind not in _QUIET:
                skipped += 1
            continue
        msg = obj.get("message")
        if not isinstance(msg, dict):
            skipped += 1
            continue
        content = msg.get("content")
        blocks = content if isinstance(content, list) else [content or ""]
        if kind == "assistant":
            key = (str(msg.get("id")), str(obj.get("requestId")))
            keyed = msg.get("id") is not None
            if keyed and key in streamed:
                first, seen = streamed[key]
            else:
                first, seen = len(pending), set()
                if keyed:
                    streamed[key] = (first, seen)
            for block in blocks:
                sig = json.dumps(block, sort_keys=True, default=str)
                if sig in seen:
                    continue  # a repeated streamed chunk
                seen.add(sig)
                bkind, text = _block_text(block)
                if bkind == "thinking":
                    omitted += len(text)
                elif bkind == "text" and text.strip():
                    pending.append(["assistant", [text], ts, n, first])
                elif bkind == "tool_use":
                    pending.append(["tool", [text], ts, n, first])
            continue
        texts, results = [], []
        for block in blocks:
            bkind, text = _block_text(block)
            if bkind == "tool_result":
                results.append(text)
            elif bkind == "text" and text.strip():
                texts.append(text)
        if results:
            pending.append(["tool", ["\n".join(results)], ts, n, len(pending)])
        if texts:
            joined = "\n".join(texts)
            pending.append([_user_origin(obj, joined, subagent), [joined], ts, n, len(pending)])

    # streamed chunks merge into their first occurrence: keep order of first appearance,
    # and join consecutive pieces of one message with the same origin
    pending.sort(key=lambda p: (p[4], p[3]))
    turns: list[Turn] = []
    merged: list[list[Any]] = []
    for item in pending:
        if merged and merged[-1][4] == item[4] and merged[-1][0] == item[0] \
                and item[0] == "assistant":
            merged[-1][1].extend(item[1])
            merged[-1][5] = item[3]
        else:
            merged.append([*item, item[3]])
    for i, (origin, texts, ts, line, _, last) in enumerate(merged):
        span = f"{loc}:{line}" if line == last else f"{loc}:{line}-{last}"
        turns.append(Turn(i, origin, "\n\n".join(texts), ts, span))

    sid = str(session_id or path.stem)
    parent_id = None
    if subagent or agent_id:
        parent_id = sid
        sid = f"{sid}/agent-{agent_id or path.stem.removeprefix('agent-')}"
    title = next((s for s, leaf in titles if leaf in uuids), None) \
        or (titles[0][0] if titles else None)
    if title is None:
        first_person = next((t for t in turns if t.origin == "person"), None)
        title = head_line(first_person.text) if first_person else None
    env = None if _is_default_root(root) or not (Path(root) / "projects").is_dir() \
        else {"CLAUDE_CONFIG_DIR": root}
    handle = shell_handle(["claude", "--resume", parent_id or sid], cwd, env)
    state: State = "succeeded" if turns else ("empty" if skipped == 0 else "validation_failed")
    receipt = Receipt(source=SOURCE, root=root, session_id=sid, locator=loc,
                      revision=snap.revision, sha256=snap.sha256, extractor=EXTRACTOR,
                      state=state, skipped_lines=skipped, unverified_person_turns=None,
                      omitted_chars=omitted)
    return [Record(source=SOURCE, session_id=sid, root=root, locator=loc, title=title,
                   cwd=cwd, branch=branch, started=min(times) if times else None,
                   ended=max(times) if times else None, turns=turns, handle=handle,
                   receipt=receipt, parent_id=parent_id)]


read = guarded(SOURCE, EXTRACTOR, _root_of, _parse)
