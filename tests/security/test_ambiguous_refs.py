"""A reference that matches a private entry and a public one never names the private one.

``Memex.resolve`` answered an ambiguous title with every candidate's key -- the outline path
of a private entry (its parent's title, its own) included -- and ``Access.resolve`` passed
that error to an MCP or HTTP client before it looked at privacy.  A client's candidates are
the entries it may see."""

from __future__ import annotations

from pathlib import Path

import pytest

from opencortex.access import Access
from opencortex.errors import NodeNotFoundError
from opencortex.memex import Memex


@pytest.fixture
def mx(tmp_path: Path) -> Memex:
    root = tmp_path / "memex"
    root.mkdir()
    (root / "a.org").write_text("* Plans\npublic plans\n")
    (root / "b.org").write_text("* Divorce lawyer :private:\n** Plans\nprivate plans\n"
                                "* Adoption papers :private:\n** Plans\nmore\n")
    m = Memex(root, index=tmp_path / "i.sqlite3")
    m.sync()
    return m


def test_a_client_resolves_among_what_it_sees(mx: Memex) -> None:
    n = Access(mx, "mcp").resolve("Plans")
    assert n.file == "a.org"
    with pytest.raises(NodeNotFoundError) as e:
        Access(mx, "http").node_text("b.org::Divorce lawyer/Plans")
    assert "Adoption" not in str(e.value)


def test_an_ambiguity_among_private_entries_names_none(mx: Memex) -> None:
    (mx.root / "a.org").write_text("* Other\n")
    mx.sync()
    for client in ("mcp", "http", "telegram"):
        with pytest.raises(NodeNotFoundError) as e:
            Access(mx, client).resolve("Plans")
        assert "Divorce" not in str(e.value) and "Adoption" not in str(e.value)
        assert "b.org" not in str(e.value)
    with pytest.raises(NodeNotFoundError, match="Divorce lawyer/Plans"):
        Access(mx, "cli").resolve("Plans")  # the person is told which ones
