"""The curated package root: ``from opencortex import Runtime, Memex, ...``."""

from __future__ import annotations

import os
import subprocess
import sys

import opencortex
from opencortex import errors


def test_all_is_sorted_and_every_name_imports() -> None:
    assert opencortex.__all__ == sorted(opencortex.__all__)
    assert len(set(opencortex.__all__)) == len(opencortex.__all__)
    for name in opencortex.__all__:
        assert getattr(opencortex, name) is not None, name
    assert set(dir(opencortex)) >= set(opencortex.__all__)


def test_the_whole_error_tree_is_public() -> None:
    tree = set(errors.__all__) - {"error_body"}
    assert tree <= set(opencortex.__all__)
    for name in tree:
        assert getattr(opencortex, name) is getattr(errors, name)


def test_the_entry_points_are_the_real_classes(memex, tmp_path) -> None:
    from opencortex import Memex, Recall, Retriever, Runtime, Signal, Skill
    from opencortex.signal import Signal as S
    from opencortex.skills.base import Skill as K

    assert Signal is S and Skill is K
    with Runtime.open(memex, tmp_path / "i.db") as rt:
        assert isinstance(rt.memex, Memex) and isinstance(rt.retriever, Retriever)
        rt.memex.sync()
        res = rt.retriever.search("caching strategies", mode="sparse", k=3)
        assert res.hits and res.hits[0].file == "notes/caching-strategies.org"
        assert isinstance(rt.access("cli").recall(), Recall)


def test_unknown_names_are_attribute_errors() -> None:
    import pytest

    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        opencortex.nope  # noqa: B018


def test_importing_the_package_imports_nothing_else() -> None:
    """``opencortex --version`` must stay fast: the root loads no submodule eagerly."""
    code = ("import sys, opencortex; print(sorted(m for m in sys.modules "
            "if m.startswith('opencortex.')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, env=dict(os.environ), timeout=60).stdout
    assert out.strip() == "[]"
