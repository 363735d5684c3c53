"""Git histories as records: commits (message, author, date, touched paths) and the change
history of one span of a file (``git log -L`` / ``--follow``).

Only read-only plumbing runs (``log``, ``show``, ``for-each-ref``, ``rev-parse``) with
``GIT_OPTIONAL_LOCKS=0`` so nothing — not even the index's stat cache — is written. Every
failure is a receipt with ``invocation_failed``, never an exception."""

from __future__ import annotations

import datetime as dt
import hashlib
import shlex
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from ...errors import GitError
from ...guard import runner
from ...guard.errors import ShellError
from ...guard.gitrepo import git_dirs as _git_dirs
from ..records import Receipt, Record, State, Turn, parse_time

__all__ = ["EXTRACTOR", "SOURCE", "Commit", "GitError", "branch_tips", "commit_record",
           "log", "run", "span_history", "toplevel"]

SOURCE = "git"
EXTRACTOR = "opencortex.recall.git@1"
_TIMEOUT = 60
_REC, _FLD = "\x1e", "\x1f"
_FORMAT = _FLD.join(["%H", "%P", "%an", "%aI", "%s", "%b"])


def run(root: str | Path, *args: str, timeout: float = _TIMEOUT) -> str:
    """Run a read-only git command in ``root`` through the one runner (pinned config, the
    sandbox, a timeout, an output cap); its stdout, or GitError."""
    top = Path(root)
    # the sandbox shows only what git needs: the work tree and its git directories
    # (a worktree's or submodule's may live elsewhere)
    readable = [d for pair in _git_dirs(top.resolve()) for d in pair] if top.is_dir() else []
    try:
        p = runner.run(runner.git_argv(root, *args), cwd=top if top.is_dir() else ".",
                       timeout=timeout, readable=readable,
                       env={"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8"})
    except ShellError as e:
        raise GitError(f"git could not start: {e}") from e
    if p.timed_out:
        raise GitError(f"git {args[0]} timed out after {timeout:.0f} s")
    if p.truncated:
        raise GitError(f"git {args[0]} printed more than the output cap; narrow it")
    if p.returncode != 0:
        raise GitError(p.stderr.decode("utf-8", "replace").strip()[:300] or
                       f"git {args[0]} exited {p.returncode}")
    return p.stdout.decode("utf-8", "replace")


def toplevel(path: str | Path) -> Path | None:
    """The repository containing ``path``, or None."""
    p = Path(path)
    if not p.is_dir():
        return None
    try:
        return Path(run(p, "rev-parse", "--show-toplevel", timeout=10).strip())
    except GitError:
        return None


def branch_tips(root: str | Path) -> dict[str, str]:
    """``{refname: sha}`` for local branches, and ``HEAD`` when it names a commit (what
    incremental indexing remembers).  HEAD counts too: a fresh clone of a bundle, a CI
    checkout or a bisect leaves a detached HEAD and perhaps no local branch at all, and
    its history is still the repository's past."""
    out = run(root, "for-each-ref", "--format=%(objectname) %(refname)", "refs/heads")
    tips = {ref: sha for sha, _, ref in (line.partition(" ") for line in out.splitlines())
            if sha}
    try:
        head = run(root, "rev-parse", "-q", "--verify", "HEAD^{commit}", timeout=10).strip()
    except GitError:  # an unborn branch: no commit yet
        head = ""
    if head:
        tips["HEAD"] = head
    return tips


@dataclass
class Commit:
    sha: str
    parents: list[str]
    author: str
    when: dt.datetime | None
    subject: str
    body: str
    paths: list[str] = field(default_factory=list)


def log(root: str | Path, exclude: list[str] | None = None,
        tips: list[str] | None = None) -> Iterator[Commit]:
    """Every commit reachable from ``tips`` (default: the local branches and HEAD, see
    :func:`branch_tips`), minus those reachable from ``exclude`` (the tips indexed last
    time), newest first, with the paths each touched."""
    if tips is None:
        tips = sorted(set(branch_tips(root).values()))
    if not tips:
        return
    args = ["log", *tips, f"--format={_REC}{_FORMAT}{_FLD}", "--name-only", "--no-renames"]
    if exclude:
        args += ["--not", *exclude]
    out = run(root, *args, timeout=300)
    for chunk in out.split(_REC)[1:]:
        parts = chunk.split(_FLD)
        if len(parts) < 7:
            continue
        sha, parents, author, when, subject, body, rest = parts[:7]
        paths = [p for p in rest.splitlines() if p.strip()]
        yield Commit(sha, parents.split(), author, parse_time(when), subject, body.strip(),
                     paths)


def reopen(root: str | Path, sha: str, *log: str) -> str:
    """The command a record gives the person to reopen a commit (or, with ``log``, a
    ``git log`` of those arguments), quoted word by word.  The
    person pastes it into their own terminal, where a plain ``git show`` runs what the
    repository's config names: ``core.pager`` (git pages to a terminal), the
    ``filter.<driver>.process`` and ``diff.<driver>.textconv`` its ``.gitattributes``
    select, ``gpg.program`` under ``log.showSignature`` -- a cloned or synced repository,
    or one a transcript says a session ran in.  So it pins them off, as
    ``guard.runner.git_argv`` does for OpenCortex's own git."""
    sub, rest = ("log", list(log)) if log else ("show", [sha])
    return shlex.join(["git", "-C", str(root), "--no-pager", sub, "--no-ext-diff",
                       "--no-textconv", "--no-show-signature", *rest])


def commit_record(root: str | Path, sha: str) -> Record:
    """Open one commit: its message and the paths it touched, read with ``git show``."""
    root = str(root)
    handle = reopen(root, sha)
    try:
        out = run(root, "show", "--no-renames", "--name-status",
                   f"--format={_FORMAT}{_FLD}", sha)
    except GitError as e:
        receipt = Receipt(SOURCE, root, sha, f"{root}@{sha}", None, None, EXTRACTOR,
                          "invocation_failed", detail=str(e))
        return Record(SOURCE, sha, root, f"{root}@{sha}", None, root, None, None, None, [],
                      handle, receipt)
    parts = out.split(_FLD)
    full, _parents, author, when, subject, body = (parts + [""] * 7)[:6]
    changes = [line for line in (parts[6] if len(parts) > 6 else "").splitlines()
               if line.strip()]
    t = parse_time(when)
    turns = [Turn(0, "tool", subject, t, f"{root}@{full}:subject")]
    if body.strip():
        turns.append(Turn(1, "tool", body.strip(), t, f"{root}@{full}:body"))
    if changes:
        turns.append(Turn(len(turns), "tool", "\n".join(changes), t, f"{root}@{full}:paths"))


    receipt = Receipt(SOURCE, root, full, f"{root}@{full}", None,
                      hashlib.sha256(out.encode()).hexdigest(), EXTRACTOR, "succeeded",
                      skipped_lines=0, unverified_person_turns=None, omitted_chars=0)
    return Record(SOURCE, full, root, f"{root}@{full}", subject, root, None, t, t, turns,
                  reopen(root, full), receipt, extra={"author": author})


def span_history(root: str | Path, path: str, ident: str | None = None,
                 max_commits: int = 20, max_chars: int = 20000) -> Record:
    """The change history of a span of ``path``: the function/identifier ``ident`` via
    ``git log -L :ident:path`` when given and found, else the file via ``--follow``.
    Each commit is one turn: header line then the diff of that span (capped)."""
    root = str(root)
    how = reopen(root, "", *([f"-L:{ident}:{path}"] if ident else
                             ["--follow", "-p", "--", path]))
    fmt = f"--format={_REC}%H{_FLD}%an{_FLD}%aI{_FLD}%s{_FLD}"
    # the format goes before ``--``: after it git reads it as a second path
    args = (["log", f"-L:{ident}:{path}", f"-n{max_commits}", fmt] if ident else
            ["log", "--follow", "-p", f"-n{max_commits}", fmt, "--", path])
    try:
        out = run(root, *args)
    except GitError as e:
        if ident:  # the function may not be findable by git's funcname rules: the file then
            return span_history(root, path, None, max_commits, max_chars)
        receipt = Receipt(SOURCE, root, path, f"{root}/{path}", None, None, EXTRACTOR,
                          "invocation_failed", detail=str(e))
        return Record(SOURCE, f"{path}", root, f"{root}/{path}", None, root, None, None, None,
                      [], how, receipt)
    turns: list[Turn] = []
    omitted = 0
    times: list[dt.datetime] = []
    for i, chunk in enumerate(out.split(_REC)[1:]):
        parts = chunk.split(_FLD)
        if len(parts) < 5:
            continue
        sha, author, when, subject, diff = parts[:5]
        t = parse_time(when)
        if t:
            times.append(t)
        text = f"{sha} {author} {subject}\n{diff.strip()}"
        if len(text) > max_chars:
            omitted += len(text) - max_chars
            text = text[:max_chars]
        turns.append(Turn(i, "tool", text, t, f"{root}@{sha}:{path}"))


    state: State = "succeeded" if turns else "empty"
    receipt = Receipt(SOURCE, root, path, f"{root}/{path}", None,
                      hashlib.sha256(out.encode()).hexdigest(), EXTRACTOR, state,
                      skipped_lines=0, unverified_person_turns=None, omitted_chars=omitted,
                      detail=how)
    return Record(SOURCE, path, root, f"{root}/{path}", f"history of {path}", root, None,
                  min(times) if times else None, max(times) if times else None, turns,
                  f"cd {shlex.quote(root)} && {how}", receipt, extra={"how": how})
