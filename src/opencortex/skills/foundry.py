"""Foundry delegate skill: scaffold a new project folder ``projects/<slug>/`` in the memex
(``index.org`` with a ``:project:`` headline carrying an :ID: and :CREATED:, ``README.org``,
``notes.org``).

It never overwrites: the folder must not exist (an empty leftover folder, e.g. after an
undo, is reused), each file is created by an atomic create that fails if the file
appeared meanwhile, and every path is confined to the memex.  Each file is written
through ``MemexWriter.create_file`` with an empty "before", so it is journaled (under the
pipeline's batch) and ``opencortex undo`` / a failed signal's rollback deletes it again
(the then-empty folder stays; a new scaffold may reuse it).

``apply_memex_op`` op: ``project`` — args ``name`` (the title), ``slug`` (optional; from
the name), ``path`` (``projects/<slug>/index.org``, for the guard).
"""

from __future__ import annotations

import datetime as dt
import re
import unicodedata
import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .base import Action, Context, Proposal, Rejection, Skill

if TYPE_CHECKING:
    from ..memex import Memex
    from ..write.writer import WriteResult

__all__ = ["PROJECTS_DIR", "TARGET", "apply_memex_op", "render", "scaffold", "skill",
           "slugify"]

TARGET = "foundry"
PROJECTS_DIR = "projects"
FILES = ("index.org", "README.org", "notes.org")
def _wall_clock() -> dt.datetime:
    return dt.datetime.now().replace(second=0, microsecond=0)


clock: Callable[[], dt.datetime] = _wall_clock

_REQUEST = re.compile(r"^\s*(?:please\s+)?(?:create|start|new|scaffold|set\s+up|make)\s+"
                      r"(?:me\s+)?(?:a\s+)?(?:new\s+)?project\s*(?:called|named)?\s*[:,-]?\s+"
                      r"(?P<name>.+?)\s*[.!]?\s*$", re.I | re.S)


def slugify(name: str) -> str:
    """A safe folder name: lowercase ASCII letters, digits and dashes (max 60)."""
    s = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode()
    s = re.sub(r"[^a-z0-9]+", "-", s.lower()).strip("-")
    return s[:60].rstrip("-")


def _name(ctx: Context) -> str | None:
    p = ctx.signal.payload
    if p.get("sensor") == "delegation" and p.get("target") == TARGET:
        args = v if isinstance(v := p.get("args"), dict) else {}
        name = args.get("name") or p.get("name")
        if name:
            return " ".join(str(name).split())
        m = _REQUEST.match(ctx.text)
        return " ".join((m.group("name") if m else ctx.text).split())
    if ctx.signal.type == "request" and (m := _REQUEST.match(ctx.text)):
        return " ".join(m.group("name").strip("\"'“”").split())
    return None


def _trigger(ctx: Context) -> bool:
    return _name(ctx) is not None


def _headline(title: str, tags: list[str]) -> str:
    from ..write.edits import TAGS_COLUMN, _width

    head = f"* {title}"
    tagstr = ":" + ":".join(tags) + ":"
    return head + " " * max(1, TAGS_COLUMN - _width(tagstr) - _width(head)) + tagstr


def render(name: str, org_id: str, now: dt.datetime) -> dict[str, str]:
    """The three files' text (the template), keyed by file name."""
    from ..org.timestamps import format_timestamp
    from ..write.edits import prop_line

    stamp = format_timestamp(now, active=False, with_time=True)
    index = "\n".join([
        f"#+TITLE: {name}",
        "#+TODO: TODO NEXT WAITING | DONE CANCELLED",
        "",
        _headline(name, ["project"]),
        ":PROPERTIES:",
        prop_line("ID", org_id),
        prop_line("CREATED", stamp),
        ":END:",
        "Outcome: what \"done\" looks like for this project.",
        "",
        "See [[file:README.org][README]] and [[file:notes.org][notes]].",
        "",
        "** TODO Write down the desired outcome and the very next action",
        "",
    ])
    readme = "\n".join([
        f"#+TITLE: {name} — README",
        "",
        f"What [[id:{org_id}][{name}]] is about, for someone (or future you) arriving cold:",
        "",
        "- Why :: ",
        "- Scope :: ",
        "- Links :: ",
        "",
    ])
    notes = "\n".join([
        f"#+TITLE: {name} — notes",
        "",
        f"Working notes for [[id:{org_id}][{name}]]; newest at the bottom.",
        "",
    ])
    return {"index.org": index, "README.org": readme, "notes.org": notes}


def _check_folder(memex: Memex, slug: str) -> tuple[str, str | None]:
    """``(folder rel path, refusal or None)``; confined to the memex."""
    from ..guard import UnsafePathError, confine

    if not slug or not re.fullmatch(r"[a-z0-9]+(?:-[a-z0-9]+)*", slug):
        return "", f"{slug!r} is not a usable project folder name (letters, digits, dashes)"
    rel = f"{PROJECTS_DIR}/{slug}"
    try:
        for f in FILES:  # checks every component: no symlink out, no .git, .org only
            confine(f"{rel}/{f}", memex.root)
    except UnsafePathError as e:
        return rel, f"refused: {e}"
    folder = memex.root / PROJECTS_DIR / slug
    if folder.is_symlink() or (folder.exists() and not folder.is_dir()):
        return rel, f"{rel} exists and is not a folder; refusing to touch it"
    if folder.is_dir() and any(folder.iterdir()):
        return rel, f"{rel}/ already exists; refusing to overwrite it (pick another name)"
    return rel, None


def _offline(ctx: Context) -> Proposal:
    name = _name(ctx) or ""
    slug = slugify(name)
    return {"action": "memex", "op": "project", "name": name, "slug": slug,
            "path": f"{PROJECTS_DIR}/{slug}/index.org"}


def _symbolic(p: Proposal, ctx: Context) -> Action | Rejection | None:
    if p.get("action") != "memex" or p.get("op") != "project":
        return None
    name = " ".join(str(p.get("name") or "").split())
    if not name:
        return Rejection("a project needs a name")
    if len(name) > 200 or re.search(r"[\x00-\x1f]", name):
        return Rejection("the project name must be one line of at most 200 characters")
    slug = slugify(str(p.get("slug") or "")) or slugify(name)
    rel, err = _check_folder(ctx.memex, slug)
    if err:
        return Rejection(err)
    return Action("memex.write", {"op": "project", "path": f"{rel}/index.org", "name": name,
                                  "slug": slug}, origin=TARGET)


def scaffold(memex: Memex, name: str, slug: str | None = None,
             now: dt.datetime | None = None) -> tuple[str, list[WriteResult]]:
    """Create the project's files; returns (folder, write results).  All or nothing."""
    from ..atomic import read_snapshot, remove_file
    from ..errors import WriteError
    from ..memory.incremental import sync
    from ..org.parser import parse
    from ..write.neutralise import neutralise_title

    name = neutralise_title(name)  # one line, no tags, no @agent request in the headline
    slug = slugify(slug or "") or slugify(name)
    rel, err = _check_folder(memex, slug)
    if err:
        raise WriteError(err)
    org_id = str(uuid.uuid4())
    texts = render(name, org_id, now or clock())
    top = parse(texts["index.org"]).headings[0]
    if top.id != org_id or "project" not in top.tags or top.title != name:
        raise WriteError(f"the project template for {name!r} would not parse as intended")
    w = memex.writer
    done: list[WriteResult] = []
    try:
        for fname in FILES:
            node = f"id:{org_id}" if fname == "index.org" else None
            done.append(w.create_file(f"{rel}/{fname}", texts[fname], op="new-project",
                                      description=f"new project {rel}/{fname}",
                                      node_key=node))
    except BaseException:
        for r in reversed(done):  # roll back what this call created (journal kept honest)
            p = memex.root / r.file
            snap = read_snapshot(p)
            if snap.hash == r.after_hash:
                w.store.begin()
                try:
                    w.store.journal_mark_undone(r.journal_id)
                    remove_file(snap)
                    w.store.commit()
                except BaseException:
                    w.store.rollback()
                    raise
                sync(memex.root, w.store, only=[r.file])
        raise
    return rel, done


def apply_memex_op(memex: Memex, args: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The ``project`` op of ``memex.write``: scaffold and say where, with the ID."""
    if args.get("op") != "project":
        raise ValueError(f"unknown foundry memex op {args.get('op')!r}")
    now = args.get("now")
    rel, results = scaffold(memex, str(args.get("name") or ""), args.get("slug"),
                            now if isinstance(now, dt.datetime) else None)
    top = memex.resolve(results[0].node or "")
    files = ", ".join(r.file for r in results)
    text = (f"Created project {top.title!r} in {rel}/: {files}. Project entry: "
            f"{top.file}:{top.line} id:{top.id}. (Journaled: undo removes the "
            f"{len(results)} files.)")
    return text, {"folder": rel, "id": top.id, "files": [r.to_dict() for r in results]}


def skill() -> Skill:
    return Skill(
        "foundry", 66, trigger=_trigger, offline=_offline, symbolic=_symbolic,
        tools=["memex.write"],
        description="Scaffold a new project folder (index.org, README.org, notes.org) in "
                    "projects/<slug>/; never overwrites.")
