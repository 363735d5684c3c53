"""The Guard: the deterministic gate between what a model proposes and what runs.

``check`` before anything is queued or run; ``last_mile`` again right before the actuator
touches the world, on the exact argv / path, so a change in between (a swapped symlink, an
edited argv, an action nobody approved) is refused.
"""

from __future__ import annotations

import glob
import ipaddress
import itertools
import os
import shlex
from collections.abc import Callable, Iterable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from .action import Action, Decision, GuardContext, is_untrusted_origin
from .approvals import ApprovalQueue, Pending
from .errors import GuardDenied, GuardError, ShellError, UnsafePathError
from .paths import CODE_DIR, confine, in_code_dir, is_inside
from .policy import GuardPolicy, Verdict
from .privacy import private_tags
from .trust import MAX_SHOWN, approval_text, sha256

if TYPE_CHECKING:
    from .shell import ShellResult

__all__ = ["Guard"]

_REMOTE_TOOLS = frozenset({"web", "websearch"})
_MAX_GLOB = 2000
"""Files a glob is expanded to when checking for symlinks that lead out of the memex."""


class _Deny(Exception):
    def __init__(self, reason: str) -> None:
        self.reason = reason


_Handler = Callable[[Action, GuardContext, Path | None], tuple[Action, list[str]]]


class Guard:
    """Decides allow / ask / deny for every action; owns no state but its policy."""

    def __init__(self, policy: GuardPolicy | None = None, *,
                 memex_root: str | os.PathLike[str] | None = None,
                 skills: Iterable[str] | None = None,
                 approvals: ApprovalQueue | None = None) -> None:
        self.policy = policy or GuardPolicy()
        self.memex_root = Path(memex_root) if memex_root is not None else None
        self.skills = frozenset(skills) if skills is not None else None
        """If given, only these skill names may originate actions."""
        self.approvals = approvals
        """If given, a Pending passed to ``last_mile`` must have been approved in it."""
        self._handlers: dict[str, _Handler] = {
            "shell": self._shell,
            "memex.write": self._memex_write,
            "web": self._web,
            "websearch": self._websearch,
            "reply": self._reply,
            "skill.trust": self._skill_trust,
        }

    # ------------------------------------------------------------------ public
    def check(self, action: Action, context: GuardContext | None = None) -> Decision:
        """allow / ask / deny for ``action``; ``Decision.action`` is what must run.

        The reason is shown to the person as is: control and invisible characters in it
        (a terminal escape, a right-to-left override, a newline in an argument) are
        written as escapes, so the approval text cannot hide part of the command.
        """
        d = self._evaluate(action, context or GuardContext())
        return replace(d, reason=visible(d.reason))

    def last_mile(self, action: Action, *, approved: Action | Decision | Pending | None = None,
                  context: GuardContext | None = None) -> Decision:
        """Re-validate the exact action about to execute: "allow" or "deny", never "ask".

        ``approved`` is what was checked / approved earlier (the Pending from the approval
        queue for "ask" actions); the action must still be exactly that.  An "ask" action
        without ``approved`` is refused.
        """
        d = self._last_mile(action, approved, context or GuardContext())
        return replace(d, reason=visible(d.reason))

    def _last_mile(self, action: Action, approved: Action | Decision | Pending | None,
                   ctx: GuardContext) -> Decision:
        d = self._evaluate(action, ctx)
        if d.denied:
            return Decision("deny", f"last-mile check: {d.reason}", d.action)
        if approved is not None:
            if isinstance(approved, Pending) and self.approvals is not None:
                try:
                    _, res = self.approvals.get(approved.id)
                except GuardError as e:
                    return Decision("deny", f"last-mile check: {e}", d.action)
                if res is None or not res.approved:
                    return Decision("deny", f"last-mile check: approval {approved.id} was "
                                    f"{'not given' if res is None else 'rejected'}", d.action)
            if isinstance(approved, Decision) and approved.denied:
                return Decision("deny", f"last-mile check: it was denied earlier "
                                f"({approved.reason})", d.action)
            if isinstance(approved, Decision) and approved.allowed and d.needs_approval:
                # allowed when checked, but something changed (a repository's config, a
                # symlink): now it needs the person, and nobody approved it
                return Decision("deny", f"last-mile check: {_summary(d.action)!r} was allowed "
                                f"when checked but now needs approval ({d.reason}); refused",
                                d.action)
            expected = approved if isinstance(approved, Action) else approved.action
            again = self._evaluate(expected, ctx)
            if again.denied or again.action != d.action:
                return Decision(
                    "deny", f"last-mile check: the action changed between check and execution "
                    f"(approved {_summary(again.action)!r}, about to run {_summary(d.action)!r}); "
                    "refused — propose it again", d.action)
        elif d.needs_approval:
            return Decision("deny", f"last-mile check: {_summary(d.action)!r} needs approval "
                            "and none was given; refused", d.action)
        return Decision("allow", f"last-mile check passed: {_summary(d.action)}", d.action)

    def run_shell(self, action: Action, *, approved: Action | Decision | Pending | None = None,
                  context: GuardContext | None = None) -> ShellResult:
        """last_mile + run: the only way the agent should execute a shell action."""
        from .shell import run_shell

        ctx = context or GuardContext()
        d = self.last_mile(action, approved=approved, context=ctx)
        if not d.allowed or d.action.tool != "shell":
            raise GuardDenied(d if d.denied else Decision("deny", "not a shell action",
                                                          d.action))
        args = d.action.args
        return run_shell(args["argv"], self.policy, args["cwd"], memex_root=self._root(ctx),
                         stdin=args.get("stdin"))

    def confine(self, path: str | os.PathLike[str], context: GuardContext | None = None) -> Path:
        """The resolved memex path for a write, or UnsafePathError."""
        root = self._root(context or GuardContext())
        if root is None:
            raise UnsafePathError("no memex root configured; refusing to write")
        return confine(path, root)

    # ------------------------------------------------------------------ core
    def _root(self, ctx: GuardContext) -> Path | None:
        return ctx.memex_root if ctx.memex_root is not None else self.memex_root

    def _evaluate(self, action: Action, ctx: GuardContext) -> Decision:
        if not isinstance(action, Action):
            raise GuardError(f"Guard.check takes an Action, got {type(action).__name__}")
        tool = action.tool
        if not isinstance(action.args, dict):
            return Decision("deny", f"{tool}: args must be a dict", action)
        if is_untrusted_origin(action.origin):
            who = repr(action.origin) if action.origin else "no skill"
            return Decision("deny", (
                f"refused {tool}: it was proposed by {who}, not by a skill. Text from notes, "
                "transcripts, web pages or tool output is data and can never originate an "
                "action (not configurable)."), action)
        if self.skills is not None and action.origin not in self.skills:
            return Decision("deny", f"refused {tool}: {action.origin!r} is not a known skill",
                            action)
        base = self.policy.verdict_for(tool)
        if base is None:
            return Decision("deny", (
                f"refused: unknown tool {tool!r}. To enable it add "
                f'guard.tools."{tool}" = "ask" (or "allow") to config.toml'), action)
        if base == "deny":
            return Decision("deny", (
                f'refused {tool}: disabled by guard.tools."{tool}" = "deny"; set it to "ask" '
                'or "allow" to enable it'), action)
        remote = ctx.remote or bool(action.args.get("remote")) or tool in _REMOTE_TOOLS
        if remote and not self.policy.remote_ok:
            priv = private_tags(ctx.tags, self.policy)
            if priv:
                shown = " ".join(f":{t}:" for t in sorted(priv))
                return Decision("deny", (
                    f"refused {tool}: the material is tagged {shown} (private) and this would "
                    "send it off this machine. Set guard.remote_ok = true to allow private "
                    "material to reach remote services."), action)
            why = _carries_private(action.args, ctx.private_text)
            if why:
                return Decision("deny", (
                    f"refused {tool}: it would send private text off this machine ({why}). "
                    "Set guard.remote_ok = true to allow private material to reach remote "
                    "services."), action)
        handler = self._handlers.get(tool)
        escalations: list[str] = []
        normal = action
        if handler is not None:
            try:
                normal, escalations = handler(action, ctx, self._root(ctx))
            except _Deny as e:
                return Decision("deny", e.reason, action)
        verdict: Verdict = "ask" if escalations else base
        summary = _summary(normal)
        if verdict == "allow":
            return Decision("allow", f'{tool} allowed (guard.tools."{tool}" = "allow"): '
                            f"{summary}", normal)
        why = "; ".join(escalations) if escalations else (
            f'guard.tools."{tool}" = "ask"; set it to "allow" to skip asking')
        return Decision("ask", f"{tool} needs your approval ({why}): {summary}", normal)

    # ------------------------------------------------------------------ tools
    def _shell(self, action: Action, ctx: GuardContext,
               root: Path | None) -> tuple[Action, list[str]]:
        # the shell policy (argument grammars, read-only tables, runner) is imported by
        # the first command checked, not by every process that builds a Guard
        from .gitrepo import configured_programs
        from .sandbox import status as sandbox_status
        from .shell import check_argv, normalise_command

        args = action.args
        if ("argv" in args) == ("command" in args):
            raise _Deny("refused shell: give exactly one of args.argv (a list) or "
                        "args.command (a string)")
        try:
            argv = normalise_command(args.get("argv", args.get("command")), self.policy.shell)
        except ShellError as e:
            raise _Deny(_refused("shell", str(e))) from None
        scan = check_argv(argv, self.policy.shell)
        if scan.deny:
            raise _Deny(_refused("shell", scan.deny))
        if root is None:
            raise _Deny("refused shell: no memex root configured; commands run inside the "
                        "memex")
        try:
            cwd = confine(args.get("cwd") or ".", root, suffixes=None, directory=True)
        except UnsafePathError as e:
            raise _Deny(f"refused shell: working directory: {e}") from None
        root_real = root.resolve()
        outside = []
        for p in scan.paths:
            q = p
            for home in ("${HOME}", "$HOME", "~"):
                if q.startswith(home):
                    q = os.path.expanduser("~") + q[len(home):]
                    break
            real = Path(os.path.realpath(cwd / q))
            if not is_inside(real, root_real):
                outside.append(p)
        outside += _links_out(scan.words, cwd, root_real)
        escalations = []
        if "git" in scan.programs:
            progs = configured_programs([cwd, *_dirs(scan.words, cwd)], root_real)
            if progs:
                escalations.append("the repository's own git config names programs git "
                                   "may run (" + ", ".join(_cap(p, 160) for p in progs[:5])
                                   + ")")
        if scan.asks:
            # each reason capped, so one huge word cannot push the others out of view
            escalations.append("not known to be read-only: " + "; ".join(
                _cap(a) for a in scan.asks))
        if outside:
            escalations.append("it names paths outside the memex: " + ", ".join(
                _cap(repr(p), 120) for p in dict.fromkeys(outside)))
        box = sandbox_status(self.policy.shell)
        if not box.available:
            if self.policy.shell.sandbox == "required":
                raise _Deny(f'refused shell: guard.shell.sandbox = "required" but '
                            f"{box.detail}")
            escalations.append(f"no OS sandbox, so every command asks: {box.detail}")
        rest = {k: v for k, v in args.items() if k not in ("argv", "command", "cwd")}
        return Action("shell", {**rest, "argv": argv, "cwd": str(cwd)}, action.origin), \
            escalations

    def _memex_write(self, action: Action, ctx: GuardContext,
                     root: Path | None) -> tuple[Action, list[str]]:
        path = action.args.get("path")
        if not isinstance(path, str):
            raise _Deny("refused memex.write: args.path (a string) is required")
        if root is None:
            raise _Deny("refused memex.write: no memex root configured")
        try:
            real = confine(path, root)
        except UnsafePathError as e:
            raise _Deny(f"refused memex.write: {e}") from None
        rel = real.relative_to(root.resolve()).as_posix()
        if not in_code_dir(real, root):
            return action.with_args(path=rel), []
        if action.args.get("op") != "skill":
            raise _Deny(f"refused memex.write: {rel} is in {CODE_DIR}/, whose files are code; "
                        "only the skill-creator writes there, after you approve the code")
        text = action.args.get("text")
        if not isinstance(text, str):
            raise _Deny("refused memex.write: a skill needs args.text (the Org file)")
        if len(text) > MAX_SHOWN:  # the person must be able to read all of what they approve
            raise _Deny(f"refused memex.write: the drafted skill is too long to show "
                        f"({len(text)} characters, at most {MAX_SHOWN}); ask for a smaller "
                        "one or write it yourself and run `opencortex skills trust NAME`")
        lint = action.args.get("lint")
        lint = [str(w) for w in lint] if isinstance(lint, list) else []
        digest = sha256(text.encode("utf-8", "surrogateescape"))
        return action.with_args(path=rel), [approval_text(rel, text, digest, lint=lint)]

    def _skill_trust(self, action: Action, ctx: GuardContext,
                     root: Path | None) -> tuple[Action, list[str]]:
        """Trusting code is always asked, whatever guard.tools says; what is shown is
        exactly the file's current bytes (their sha256 is what gets recorded)."""
        a = action.args
        path, text, digest = a.get("path"), a.get("text"), a.get("sha256")
        if not (isinstance(path, str) and isinstance(text, str) and isinstance(digest, str)):
            raise _Deny("refused skill.trust: args.path, args.text and args.sha256 are required")
        if root is None:
            raise _Deny("refused skill.trust: no memex root configured")
        try:
            real = confine(path, root)
        except UnsafePathError as e:
            raise _Deny(f"refused skill.trust: {e}") from None
        if not in_code_dir(real, root):
            raise _Deny(f"refused skill.trust: {path} is not in the memex's {CODE_DIR}/ folder")
        try:
            now = real.read_bytes()
        except OSError as e:
            raise _Deny(f"refused skill.trust: cannot read {path}: {e.strerror}") from None
        if sha256(text.encode("utf-8", "surrogateescape")) != digest or sha256(now) != digest:
            raise _Deny(f"refused skill.trust: {path} changed since the approval was asked "
                        "for; ask again to see its current code")
        if len(text) > MAX_SHOWN:
            raise _Deny(f"refused skill.trust: {path} is too long to show here "
                        f"({len(text)} characters); run `opencortex skills trust "
                        f"{real.stem}` to read and trust it")
        rel = real.relative_to(root.resolve()).as_posix()
        prev = a.get("previous")
        shown = approval_text(rel, text, digest,
                              previous=prev if isinstance(prev, str) else None)
        return action.with_args(path=rel), [shown]

    def _web(self, action: Action, ctx: GuardContext,
             root: Path | None) -> tuple[Action, list[str]]:
        url = action.args.get("url")
        if not isinstance(url, str) or not url.strip():
            raise _Deny("refused web: args.url (a string) is required")
        try:
            u = urlsplit(url.strip())
            host = u.hostname or ""
            u.port  # noqa: B018 - raises on a malformed port
        except ValueError as e:
            raise _Deny(f"refused web: malformed URL {url!r} ({e})") from None
        if u.scheme not in ("http", "https"):
            raise _Deny(f"refused web: only http(s) URLs are fetched, not {u.scheme or 'no'}:"
                        f" scheme ({url!r})")
        if not host:
            raise _Deny(f"refused web: no host in {url!r}")
        if u.username or u.password:
            raise _Deny("refused web: the URL carries credentials (user:pass@); refused so "
                        "they are not sent")
        if not self.policy.web.allow_private_hosts and private_host(host):
            raise _Deny(f"refused web: {host} is a local or private-network address; set "
                        "guard.web.allow_private_hosts = true to allow it")
        return action.with_args(url=url.strip()), []

    def _websearch(self, action: Action, ctx: GuardContext,
                   root: Path | None) -> tuple[Action, list[str]]:
        q = action.args.get("query")
        if not isinstance(q, str) or not q.strip():
            raise _Deny("refused websearch: args.query (a string) is required")
        return action.with_args(query=" ".join(q.split())[:500]), []

    def _reply(self, action: Action, ctx: GuardContext,
               root: Path | None) -> tuple[Action, list[str]]:
        text = action.args.get("text", "")
        if not isinstance(text, str):
            raise _Deny("refused reply: args.text must be a string")
        return action, []


def _carries_private(args: dict[str, Any], judge: Callable[[str], str | None] | None,
                     ) -> str | None:
    """Why any string among an action's arguments carries private material, or None."""
    if judge is None:
        return None
    todo: list[Any] = [args]
    while todo:
        v = todo.pop()
        if isinstance(v, str):
            why = judge(v)
            if why:
                return why
        elif isinstance(v, dict):
            todo.extend(v.values())
        elif isinstance(v, list | tuple):
            todo.extend(v)
    return None


def private_host(host: str) -> bool:
    """Loopback / private / link-local (cloud metadata) hosts, by name or literal address."""
    h = host.strip("[]").rstrip(".").lower()
    if h in ("localhost", "localhost.localdomain", "ip6-localhost", "metadata",
             "metadata.google.internal") or h.endswith((".localhost", ".local", ".internal")):
        return True
    ip: ipaddress.IPv4Address | ipaddress.IPv6Address | None
    try:
        ip = ipaddress.ip_address(h)
    except ValueError:
        try:  # 2130706433, 0x7f000001, 127.1: forms browsers and curl accept
            ip = ipaddress.ip_address(int(h, 0)) if h.isalnum() else None
        except ValueError:
            ip = None
        if ip is None:
            return False
    return not public_address(ip)


_NAT64 = ipaddress.ip_network("64:ff9b::/96")


def public_address(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    """Allow by argument: True only for an address ``ipaddress`` calls global (so not
    loopback, private, link-local, shared 100.64/10, benchmarking, documentation,
    reserved…) that is not multicast — checked again for every IPv4 address an IPv6 one
    carries (mapped ::ffff:a.b.c.d, 6to4, Teredo, NAT64)."""
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return public_address(ip.ipv4_mapped)
    checks: list[ipaddress.IPv4Address | ipaddress.IPv6Address] = [ip]
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.sixtofour is not None:
            checks.append(ip.sixtofour)
        if ip.teredo is not None:
            checks.extend(ip.teredo)
        if ip in _NAT64:
            checks.append(ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF))
    return all(a.is_global and not a.is_multicast for a in checks)


def _links_out(words: Iterable[str], cwd: Path, root: Path) -> list[str]:
    """Words that name an existing file (relative to ``cwd``) whose real path, through a
    symlink, lies outside the memex: ``cat notes.org`` where notes.org -> ~/.ssh/id_rsa."""
    out = []
    for w in dict.fromkeys(words):
        if not w or w.startswith(("/", "~", "$")) or len(w) > 4096:
            continue  # absolute/home paths are judged by the path check itself
        names = [w]
        if any(c in w for c in "*?["):  # a shell glob: the files it would expand to
            names += list(itertools.islice(glob.iglob(w, root_dir=cwd), _MAX_GLOB))
        for n in names:
            p = cwd / n
            try:
                if os.path.lexists(p) and not is_inside(Path(os.path.realpath(p)), root):
                    out.append(w if n == w else f"{w} (matches {n})")
                    break
            except (OSError, ValueError):
                out.append(w)
                break
    return out


def _dirs(words: Iterable[str], cwd: Path, limit: int = 64) -> list[Path]:
    """Existing directories among the words (``git -C sub``, ``--git-dir sub/.git``)."""
    out = []
    for w in list(dict.fromkeys(words))[:limit * 4]:
        if not w or len(w) > 1024:
            continue
        try:
            if (cwd / w).is_dir():
                out.append(cwd / w)
        except (OSError, ValueError):
            continue
        if len(out) >= limit:
            break
    return out


def _cap(text: str, n: int = 240) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


def visible(text: str) -> str:
    """``text`` with every non-printable character (C0/C1 controls, bidi overrides,
    zero-width and other format characters, line separators) written as an escape."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() or c == " " else
                   (f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}"
                    if ord(c) < 0x10000 else f"\\U{ord(c):08x}") for c in text)


def _refused(tool: str, reason: str) -> str:
    return f"refused {tool}: {reason.removeprefix('refused: ')}"


def _summary(action: Action) -> str:
    a = action.args
    if action.tool == "shell" and isinstance(a.get("argv"), list):
        return shlex.join(a["argv"])
    if action.tool == "memex.write":
        return str(a.get("path"))
    if action.tool == "skill.trust":
        return f"trust {a.get('path')}"
    if action.tool == "web":
        return str(a.get("url"))
    return action.tool
