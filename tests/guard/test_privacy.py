from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from opencortex.guard import (
    Action,
    Guard,
    GuardContext,
    GuardPolicy,
    filter_private,
    is_private,
)
from opencortex.memory.nodes import Node

POLICY = GuardPolicy.from_config({"guard": {"privacy_tags": ["@personal", "private"]}})


@dataclass
class Item:
    title: str
    tags: list[str] = field(default_factory=list)


def test_is_private() -> None:
    assert is_private(["work", "private"], POLICY)
    assert is_private(["@personal"], POLICY)
    assert is_private([":PRIVATE:"], POLICY)  # Org spelling and case do not matter
    assert is_private(":work:private:", POLICY)  # a raw tag string is split, not iterated
    assert not is_private(["work", "privateer", "personal"], POLICY)
    assert not is_private([], POLICY) and not is_private(None, POLICY)
    assert not is_private("private-ish", POLICY)


def test_filter_private_drops_inherited() -> None:
    nodes = [Item("a", ["work"]), Item("b", ["journal", "private"]),  # inherited from file
             Item("c", []), Item("d", ["@personal", "health"])]
    assert [n.title for n in filter_private(nodes, POLICY)] == ["a", "c"]


def test_filter_private_real_nodes() -> None:
    fields = Node.__dataclass_fields__
    assert "tags" in fields  # the store's Node carries all tags, inherited included


def test_untaggable_things_are_treated_as_private() -> None:
    assert filter_private([object(), Item("x")], POLICY)[0].title == "x"
    assert len(filter_private([object(), Item("x")], POLICY)) == 1


def test_custom_accessor_and_remote_ok() -> None:
    rows = [("a", "work"), ("b", "private")]
    kept = filter_private(rows, POLICY, tags_of=lambda r: [r[1]])
    assert kept == [("a", "work")]
    ok = GuardPolicy.from_config({"guard": {"remote_ok": True}})
    assert len(filter_private([Item("b", ["private"])], ok)) == 1


def test_guard_denies_private_material_going_remote(memex: Path) -> None:
    g = Guard(memex_root=memex)
    a = Action("delegate", {"to": "remote-model", "task": "summarise"}, "notes")
    private = GuardContext(tags=frozenset({"journal", "private"}), remote=True)
    d = g.check(a, private)
    assert d.denied and ":private:" in d.reason and "guard.remote_ok = true" in d.reason
    assert g.check(a, GuardContext(tags=frozenset({"journal"}), remote=True)).allowed
    assert g.check(a, GuardContext(tags=frozenset({"private"}), remote=False)).allowed
    # web always leaves the machine
    w = Action("web", {"url": "https://example.com/search?q=x"}, "web")
    assert g.check(w, GuardContext(tags=frozenset({"@personal"}))).denied
    g_ok = Guard(GuardPolicy.from_config({"guard": {"remote_ok": True}}), memex_root=memex)
    assert g_ok.check(a, private).allowed
