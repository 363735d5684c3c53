"""Structure from a client: every Org construct a client can set goes through one
validator (org/constructs.py), whatever the entry point, and the verified write proves a
new entry has exactly the planning, properties and tags its op declared."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from opencortex.errors import InvalidOrgConstruct, VerifyError
from opencortex.org import constructs as oc
from opencortex.org.parser import parse
from opencortex.write.verify import Intent, verify_write

SEXP_TAG = "x:\nDEADLINE: <%%(progn (shell-command \"touch /tmp/pwned\") t)>"
BAD_TAGS = [SEXP_TAG, "a b", "a:b", "with\rcr", "", "x" * 300, "tab\there", "ta\u2028g"]


def _mcp(memex: Path, index: Path, calls: list[tuple[str, dict[str, Any]]]) -> list[str]:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[2] / "src")}
    params = StdioServerParameters(
        command=sys.executable,
        args=["-c", "from opencortex.cli import main; main()", "mcp", "--memex", str(memex),
              "--index", str(index)], env=env)

    async def run() -> list[str]:
        out = []
        async with stdio_client(params) as (r, w), ClientSession(r, w) as s:
            await s.initialize()
            for name, args in calls:
                res = await s.call_tool(name, args)
                out.append(json.dumps([c.model_dump() for c in res.content], ensure_ascii=False))
        return out

    return anyio.run(run)


def _all_org(memex: Path) -> str:
    return "\n".join(p.read_text(encoding="utf-8") for p in sorted(memex.rglob("*.org")))


def test_mcp_capture_refuses_a_tag_that_breaks_the_headline(memex: Path,
                                                            tmp_path: Path) -> None:
    """Finding: MCP ``capture`` wrote a tag holding a newline, so the entry got a
    ``DEADLINE:`` line with a diary sexp (Emacs's agenda evaluates it)."""
    before = _all_org(memex)
    out = _mcp(memex, tmp_path / "i.sqlite3", [
        ("capture", {"text": "Buy umbrellas", "tags": ["errand", SEXP_TAG]}),
        ("capture", {"text": "Buy umbrellas", "tags": ["a b"]}),
        ("capture", {"text": "Buy rain boots", "tags": ["errand", ":home:"]}),
    ])
    assert "not a valid Org tag" in out[0] and "not a valid Org tag" in out[1]
    after = _all_org(memex)
    assert "%%(" not in after and "pwned" not in after
    assert "Buy umbrellas" not in after
    assert "Buy rain boots" in after and ":errand:home:" in after
    assert after != before


@pytest.mark.parametrize("tag", BAD_TAGS)
def test_the_tag_validator_refuses_what_is_not_one_tag(tag: str) -> None:
    with pytest.raises(InvalidOrgConstruct):
        oc.check_tag(tag)


def test_the_validators_accept_org_constructs() -> None:
    assert oc.check_tags([":home:", "work", "@office", "p#1", "ünï", ""]) == \
        ["home", "work", "@office", "p#1", "ünï"]
    assert oc.check_property_value("a\nb  c") == "a b c"
    assert oc.check_property_name("Effort") == "Effort"
    for bad in ("END", "a b", "x\ny", ""):
        with pytest.raises(InvalidOrgConstruct):
            oc.check_property_name(bad)
    with pytest.raises(InvalidOrgConstruct):
        oc.check_keyword("TODO\nDEADLINE:", ["TODO", "DONE"])
    with pytest.raises(InvalidOrgConstruct):
        oc.check_keyword("WAIT", ["TODO", "DONE"])
    assert oc.check_priority("A") == "A"
    for bad in ("AA", "a\n", "#"):
        with pytest.raises(InvalidOrgConstruct):
            oc.check_priority(bad)
    with pytest.raises(InvalidOrgConstruct):
        oc.check_title("one\nDEADLINE: <2026-01-01>")


def test_every_writer_entry_point_uses_the_validator(memex: Path, tmp_path: Path) -> None:
    from opencortex.memex import Memex

    m = Memex(memex, index=tmp_path / "w.sqlite3")
    try:
        m.sync()
        w = m.writer
        with pytest.raises(InvalidOrgConstruct):
            w.capture("Umbrella", tags=[SEXP_TAG])
        with pytest.raises(InvalidOrgConstruct):
            w.new_note("Umbrella note", tags=[SEXP_TAG])
        res = w.capture("Umbrella ok", tags=["rain"])
        node = m.store.nodes_by_ref(res.node)[0]
        with pytest.raises(InvalidOrgConstruct):
            w.tag(node, ["+" + SEXP_TAG])
        with pytest.raises(InvalidOrgConstruct):
            w.set_property(node, "X\nDEADLINE:", "1")
        with pytest.raises(InvalidOrgConstruct):
            w.set_priority(node, "A\nB")
        w.set_property(node, "Note", "one\nDEADLINE: <%%(diary-float t 1 1)>")
        text = _all_org(memex)
        assert "\nDEADLINE: <%%" not in text
    finally:
        m.close()


def test_the_verified_write_refuses_an_undeclared_planning_line() -> None:
    """Defence in depth: even if a construct slipped past its validator, the new entry
    must read back with exactly the planning, properties and tags the op declared."""
    old = parse("* Inbox\n")
    new = ("* Inbox\n* Buy umbrellas :errand:x:\nDEADLINE: <%%(diary-float t 1 1)>\n"
           ":PROPERTIES:\n:ID: 1\n:CREATED: [2026-01-01 Thu 10:00]\n:END:\n")
    declared = Intent(added=1, new_planning=frozenset(),
                      new_properties=frozenset({"ID", "CREATED"}), new_tags=("errand",))
    with pytest.raises(VerifyError, match="planning"):
        verify_write(old, new, declared, lambda h: h.title == "Buy umbrellas", "capture")
    ok = new.replace("DEADLINE: <%%(diary-float t 1 1)>\n", "").replace(":x:", ":")
    verify_write(old, ok, declared, lambda h: h.title == "Buy umbrellas", "capture")
    extra = ok.replace(":END:", ":EXPORT_FILE_NAME: /etc/x\n:END:")
    with pytest.raises(VerifyError, match="properties"):
        verify_write(old, extra, declared, lambda h: h.title == "Buy umbrellas", "capture")
