"""The Guard: the deterministic gate between what a model proposes and what runs.

``check`` before anything is queued or run; ``last_mile`` again right before the actuator
touches the world, on the exact argv / path, so a change in between (a swapped symlink, an
edited argv, an action nobody approved) is refused.
"""

from __future__ import annotations

import ipaddress
import os
import shlex
from collections.abc import Callable, Iterable
from pathlib import Path
from urllib.parse import urlsplit

from .action import Action, Decision, GuardContext, is_untrusted_origin
from .approvals import ApprovalQueue, Pending
from .errors import GuardDenied, GuardError, ShellError, UnsafePathError
from .paths import CODE_DIR, confine, in_code_dir, is_inside
from .policy import GuardPolicy, Verdict
from .privacy import private_tags
from .shell import ShellResult, check_argv, normalise_command, run_shell
from .trust import MAX_SHOWN, approval_text, sha256

__all__ = ["Guard"]

_REMOTE_TOOLS = frozenset({"web", "websearch"})


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
        """allow / ask / deny for ``action``; ``Decision.action`` is what must run."""
        return self._evaluate(action, context or GuardContext())

    def last_mile(self, action: Action, *, approved: Action | Decision | Pending | None = None,
                  context: GuardContext | None = None) -> Decision:
        """Re-validate the exact action about to execute: "allow" or "deny", never "ask".

        ``approved`` is what was checked / approved earlier (the Pending from the approval
        queue for "ask" actions); the action must still be exactly that.  An "ask" action
        without ``approved`` is refused.
        """
        ctx = context or GuardContext()
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
            expected = approved if isinstance(approved, Action) else approved.action
            e = self._evaluate(expected, ctx)
            if e.denied or e.action != d.action:
                return Decision(
                    "deny", f"last-mile check: the action changed between check and execution "
                    f"(approved {_summary(e.action)!r}, about to run {_summary(d.action)!r}); "
                    "refused — propose it again", d.action)
        elif d.needs_approval:
            return Decision("deny", f"last-mile check: {_summary(d.action)!r} needs approval "
                            "and none was given; refused", d.action)
        return Decision("allow", f"last-mile check passed: {_summary(d.action)}", d.action)

    def run_shell(self, action: Action, *, approved: Action | Decision | Pending | None = None,
                  context: GuardContext | None = None) -> ShellResult:
        """last_mile + run: the only way the agent should execute a shell action."""
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
        return Decision("ask", f"{tool} needs your approval: {summary} ({why})", normal)

    # ------------------------------------------------------------------ tools
    def _shell(self, action: Action, ctx: GuardContext,
               root: Path | None) -> tuple[Action, list[str]]:
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
        escalations = []
        if outside:
            escalations.append("it names paths outside the memex: " + ", ".join(
                repr(p) for p in dict.fromkeys(outside)))
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


def private_host(host: str) -> bool:
    """Loopback / private / link-local (cloud metadata) hosts, by name or literal address."""
    h = host.strip("[]").rstrip(".").lower()
    if h in ("localhost", "localhost.localdomain", "ip6-localhost", "metadata",
             "metadata.google.internal") or h.endswith((".localhost", ".local", ".internal")):
        return True
    try:
        ip = ipaddress.ip_address(h)
    except ValueError:
        try:  # 2130706433, 0x7f000001, 127.1: forms browsers and curl accept
            ip = ipaddress.ip_address(int(h, 0)) if h.isalnum() else None
        except ValueError:
            ip = None
        if ip is None:
            return False
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return bool(ip.is_private or ip.is_loopback or ip.is_link_local or ip.is_reserved
                or ip.is_multicast or ip.is_unspecified)


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
