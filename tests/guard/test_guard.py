"""Guard.check and Guard.last_mile: verdicts, reasons, normalisation, changes caught."""

from __future__ import annotations

from pathlib import Path

import pytest

from opencortex.guard import (
    Action,
    ApprovalQueue,
    Decision,
    Guard,
    GuardContext,
    GuardError,
    GuardPolicy,
)

from .conftest import policy


def test_default_verdicts(guard: Guard) -> None:
    assert guard.check(Action("reply", {"text": "hi"}, "router")).allowed
    assert guard.check(Action("delegate", {"task": "x"}, "router")).allowed
    assert guard.check(Action("memex.write", {"path": "inbox.org"}, "gtd")).allowed
    assert guard.check(Action("shell", {"argv": ["ls"]}, "shell")).needs_approval
    assert guard.check(Action("web", {"url": "https://example.com"}, "web")).needs_approval


def test_unknown_tool_is_denied_with_how_to_enable(guard: Guard) -> None:
    d = guard.check(Action("email.send", {}, "mail"))
    assert d.denied and 'guard.tools."email.send" = "ask"' in d.reason


def test_configured_deny_and_new_tools(memex: Path) -> None:
    g = Guard(GuardPolicy.from_config({"guard": {"tools": {"web": "deny", "calendar": "ask"}}}),
              memex_root=memex)
    d = g.check(Action("web", {"url": "https://example.com"}, "web"))
    assert d.denied and '"deny"' in d.reason and '"allow"' in d.reason
    assert g.check(Action("calendar", {"when": "tomorrow"}, "gtd")).needs_approval


def test_reasons_say_what_and_how(memex: Path) -> None:
    d = Guard(memex_root=memex).check(Action("shell", {"command": "git status"}, "shell"))
    assert "git status" in d.reason and 'guard.tools."shell"' in d.reason
    d = Guard(policy(tools={"shell": "allow"}), memex_root=memex).check(
        Action("shell", {"command": "git status"}, "shell"))
    assert d.allowed and "git status" in d.reason


def test_deterministic(guard: Guard) -> None:
    a = Action("shell", {"command": "rg -n TODO notes"}, "shell")
    assert all(guard.check(a) == guard.check(a) for _ in range(5))


def test_not_an_action(guard: Guard) -> None:
    with pytest.raises(GuardError):
        guard.check({"tool": "reply"})  # type: ignore[arg-type]
    assert guard.check(Action("reply", "hi", "router")).denied  # type: ignore[arg-type]
    assert guard.check(Action("reply", {"text": 3}, "router")).denied


# -- memex.write


def test_memex_write_normalises_path(guard: Guard, memex: Path) -> None:
    d = guard.check(Action("memex.write", {"path": "./notes//a.org", "text": "x"}, "notes"))
    assert d.allowed and d.action.args == {"path": "notes/a.org", "text": "x"}
    d = guard.check(Action("memex.write", {"path": str(memex / "inbox.org")}, "notes"))
    assert d.action.args["path"] == "inbox.org"
    assert guard.confine("notes/b.org") == (memex / "notes" / "b.org").resolve()


@pytest.mark.parametrize("path", ["../x.org", "/etc/x.org", "notes/a.txt", "a\x00.org",
                                  ".git/x.org", 42])
def test_memex_write_refused(guard: Guard, path: object) -> None:
    d = guard.check(Action("memex.write", {"path": path}, "notes"))
    assert d.denied and d.reason.startswith("refused memex.write")


def test_memex_write_without_root() -> None:
    assert Guard().check(Action("memex.write", {"path": "a.org"}, "notes")).denied
    ctx = GuardContext()
    assert Guard().check(Action("memex.write", {"path": "a.org"}, "notes"), ctx).denied


def test_context_root_overrides(memex: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    g = Guard(memex_root=memex)
    d = g.check(Action("memex.write", {"path": "x.org"}, "notes"),
                GuardContext.of(memex_root=other))
    assert d.allowed


def test_symlink_swapped_between_check_and_last_mile(guard: Guard, memex: Path,
                                                     tmp_path: Path) -> None:
    a = Action("memex.write", {"path": "notes/target.org"}, "notes")
    d = guard.check(a)
    assert d.allowed
    outside = tmp_path / "outside"
    outside.mkdir()
    (memex / "notes" / "a.org").unlink()
    (memex / "notes").rename(memex / "notes-old")
    (memex / "notes").symlink_to(outside)  # attacker swaps the directory
    last = guard.last_mile(d.action, approved=d)
    assert last.denied and "outside the memex" in last.reason


# -- last mile


def test_last_mile_allows_unchanged(memex: Path) -> None:
    g = Guard(policy(tools={"shell": "allow"}), memex_root=memex)
    d = g.check(Action("shell", {"command": "ls -la"}, "shell"))
    last = g.last_mile(d.action, approved=d)
    assert last.allowed and last.action == d.action
    assert g.last_mile(d.action).allowed  # "allow" tools need no approval token


def test_last_mile_catches_changed_argv(memex: Path) -> None:
    g = Guard(policy(), memex_root=memex)
    d = g.check(Action("shell", {"command": "ls"}, "shell"))
    assert d.needs_approval
    changed = Action("shell", {**d.action.args, "argv": ["ls", "-la", "/root"]}, "shell")
    last = g.last_mile(changed, approved=d)
    assert last.denied and "changed between check and execution" in last.reason
    dangerous = Action("shell", {**d.action.args, "argv": ["rm", "-rf", "/"]}, "shell")
    assert g.last_mile(dangerous, approved=d).denied


def test_last_mile_mutated_args_dict_is_caught(memex: Path) -> None:
    g = Guard(policy(), memex_root=memex)
    d = g.check(Action("shell", {"argv": ["ls"]}, "shell"))
    approved = Action(d.action.tool, dict(d.action.args), d.action.origin)
    d.action.args["argv"] = ["cat", "/etc/shadow"]  # args is a dict: someone mutates it
    assert g.last_mile(d.action, approved=approved).denied


def test_last_mile_ask_needs_approval(memex: Path) -> None:
    g = Guard(memex_root=memex)
    d = g.check(Action("shell", {"argv": ["ls"]}, "shell"))
    last = g.last_mile(d.action)
    assert last.denied and "needs approval" in last.reason
    assert g.last_mile(d.action, approved=d).allowed
    denied = Decision("deny", "no", d.action)
    assert g.last_mile(d.action, approved=denied).denied


def test_last_mile_with_approval_queue(memex: Path) -> None:
    q = ApprovalQueue()
    g = Guard(memex_root=memex, approvals=q)
    d = g.check(Action("shell", {"argv": ["echo", "ok"]}, "shell"))
    p = q.request(d.action, d.reason)
    assert g.last_mile(d.action, approved=p).denied  # not answered yet
    q.resolve(p.id, True, "sam")
    assert g.last_mile(d.action, approved=p).allowed
    assert g.run_shell(d.action, approved=p).stdout == "ok\n"
    p2 = q.request(d.action, d.reason)
    q.resolve(p2.id, False, "sam")
    assert g.last_mile(d.action, approved=p2).denied


def test_last_mile_never_asks(guard: Guard) -> None:
    for a in [Action("shell", {"argv": ["ls"]}, "shell"), Action("reply", {"text": "x"}, "r"),
              Action("nope", {}, "r")]:
        assert guard.last_mile(a).verdict in ("allow", "deny")


# -- web


@pytest.mark.parametrize("url", ["https://example.com/a", "http://example.org:8080/x?q=1"])
def test_web_ok(memex: Path, url: str) -> None:
    g = Guard(GuardPolicy.from_config({"guard": {"tools": {"web": "allow"}}}), memex_root=memex)
    assert g.check(Action("web", {"url": url}, "web")).allowed


@pytest.mark.parametrize("url", [
    "file:///etc/passwd", "javascript:alert(1)", "ftp://x.org/a", "gopher://x",
    "http://localhost:8080/admin", "http://127.0.0.1/", "http://[::1]/", "http://10.0.0.1/",
    "http://192.168.1.1/", "http://169.254.169.254/latest/meta-data/", "http://0.0.0.0/",
    "http://2130706433/", "http://0x7f000001/", "http://metadata.google.internal/",
    "http://printer.local/", "https://user:pass@example.com/", "http://[::ffff:127.0.0.1]/",
    "", "http:///nohost", "http://example.com:99999/",
])
def test_web_refused(memex: Path, url: str) -> None:
    g = Guard(GuardPolicy.from_config({"guard": {"tools": {"web": "allow"}}}), memex_root=memex)
    assert g.check(Action("web", {"url": url}, "web")).denied


def test_web_private_hosts_opt_in(memex: Path) -> None:
    g = Guard(GuardPolicy.from_config({"guard": {"tools": {"web": "allow"},
                                                 "web": {"allow_private_hosts": True}}}),
              memex_root=memex)
    assert g.check(Action("web", {"url": "http://localhost:8080/"}, "web")).allowed
    assert g.check(Action("web", {"url": "file:///etc/passwd"}, "web")).denied
