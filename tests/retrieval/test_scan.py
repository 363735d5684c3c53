"""The live ripgrep scan: headlines for matches, and no query escapes."""

from __future__ import annotations

from pathlib import Path

import pytest

from opencortex.retrieval.scan import ScanError, scan

DOC = """#+TITLE: Scan test
#+TODO: TODO IDEA | DONE
Preamble mentions zebra.
* IDEA Top heading :tag:
SCHEDULED: <2026-11-30 Mon>
:PROPERTIES:
:ID:       top-id
:END:
** Child heading
Body line with zebra and $(touch pwned) and a.b*c
:PROPERTIES:
:ID: not-a-drawer-id
:END:
*** Grandchild
zebra again
"""


@pytest.fixture
def root(tmp_path: Path) -> Path:
    r = tmp_path / "m"
    (r / "sub").mkdir(parents=True)
    (r / "sub" / "a.org").write_text(DOC)
    (r / "notes.txt").write_text("zebra in a non-org file\n")
    (r / ".hidden").mkdir()
    (r / ".hidden" / "x.org").write_text("* zebra hidden\n")
    return r


def test_matches_map_to_their_headline(root: Path) -> None:
    hits = scan(root, "zebra")
    assert [(h.file, h.line, h.outline) for h in hits] == [
        ("sub/a.org", None, []),
        ("sub/a.org", 9, ["Top heading", "Child heading"]),
        ("sub/a.org", 14, ["Top heading", "Child heading", "Grandchild"]),
    ]
    assert hits[1].id is None  # a drawer after body text is no property drawer
    top = scan(root, "Top heading")[0]
    assert (top.id, top.todo, top.title, top.level) == ("top-id", "IDEA", "Top heading", 1)


def test_fixed_string_by_default_regex_on_request(root: Path) -> None:
    assert len(scan(root, "a.b*c")) == 1
    assert scan(root, "a.b.c") == []
    assert len(scan(root, r"a\.b\*c", regex=True)) == 1
    assert len(scan(root, r"zeb+ra", regex=True)) == 3


def test_no_query_escapes_into_shell_or_filesystem(root: Path, tmp_path: Path) -> None:
    for q in ["$(touch pwned)", "`touch pwned`", "; touch pwned", "--files", "-e",
              "../../etc/passwd", "--pre=sh"]:
        scan(root, q)
    assert not (root / "pwned").exists() and not (tmp_path / "pwned").exists()
    assert scan(root, "$(touch pwned)")[0].line == 9  # found as text
    assert scan(root, "--files") == []  # a query, not a flag


def test_bad_regex_is_a_clear_error(root: Path) -> None:
    with pytest.raises(ScanError, match="rejected"):
        scan(root, "(unclosed", regex=True)


def test_pathological_regex_is_linear(root: Path) -> None:
    (root / "big.org").write_text("* h\n" + "a" * 200_000 + "\n")
    assert scan(root, "(a+)+$", regex=True)[0].file == "big.org"


def test_empty_memex_and_missing_root(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    assert scan(tmp_path / "empty", "x") == []
    with pytest.raises(ScanError, match="not a directory"):
        scan(tmp_path / "nope", "x")
