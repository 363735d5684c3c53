"""One error tree: every project exception in errors.py, drawn in its docstring, with a status."""

from __future__ import annotations

import ast
import importlib
import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from opencortex import errors
from opencortex.errors import OpenCortexError

SRC = Path(errors.__file__).resolve().parent
DRAWN = re.compile(r"^[ \t│]*[├└]── (\w+)[ \t]+(?:(\d{3})[ \t])?", re.M)


def _tree(cls: type) -> set[type]:
    out = set()
    for sub in cls.__subclasses__():
        out |= {sub, *_tree(sub)}
    return out


def _import_everything() -> None:
    """Every module of the package, so no subclass hides in one not imported yet."""
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC.parent).with_suffix("")
        name = ".".join(rel.parts).removesuffix(".__init__")
        if name.endswith("__main__"):
            continue
        try:
            importlib.import_module(name)
        except ImportError as e:  # an optional extra that is not installed
            if "opencortex" in str(e):
                raise


def test_every_subclass_is_drawn_in_the_docstring_with_its_status() -> None:
    _import_everything()
    drawn: dict[str, int | None] = {}
    for name, status in DRAWN.findall(errors.__doc__ or ""):
        drawn.setdefault(name, int(status) if status else None)
    project = {c for c in _tree(OpenCortexError) if c.__module__.startswith("opencortex")}
    assert {c.__name__ for c in project} == set(drawn)
    for cls in project:
        assert cls.__module__ == "opencortex.errors", f"{cls} is defined outside errors.py"
        assert drawn[cls.__name__] == cls.status, cls
        # the drawing's parent is a real base
        assert any(issubclass(cls, b) for b in cls.__mro__[1:] if b is not cls)


def test_every_error_is_exported_and_re_exports_are_the_same_class() -> None:
    from opencortex.access import AccessDenied
    from opencortex.guard.errors import ApprovalError
    from opencortex.llm.errors import ProviderError
    from opencortex.recall.engine import RecallError
    from opencortex.recall.sources.git import GitError
    from opencortex.skills.websearch import WebError
    from opencortex.telegram.gateway import TelegramError
    from opencortex.tui.backend import BackendError

    names = {c.__name__ for c in _tree(OpenCortexError)} | {"OpenCortexError"}
    assert names <= set(errors.__all__)
    assert errors.__all__ == sorted(errors.__all__)
    for cls in (AccessDenied, ApprovalError, ProviderError, RecallError, GitError, WebError,
                TelegramError, BackendError):
        assert getattr(errors, cls.__name__) is cls and issubclass(cls, OpenCortexError)


def test_no_exception_class_is_defined_outside_errors_py() -> None:
    """A new project error goes into the tree, not next to the code that raises it."""
    bases = {"Exception", "RuntimeError", "ValueError", "OSError", "OpenCortexError"}
    strays = []
    for path in SRC.rglob("*.py"):
        if path.name == "errors.py" and path.parent == SRC:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
                names = {getattr(b, "id", getattr(b, "attr", "")) for b in node.bases}
                if names & bases or any(n.endswith("Error") for n in names):
                    strays.append(f"{path.relative_to(SRC)}:{node.lineno} {node.name}")
    assert strays == []


def test_foreign_bases_are_kept_for_existing_handlers() -> None:
    assert issubclass(errors.GitError, RuntimeError)
    assert issubclass(errors.NotRegularError, OSError)
    assert issubclass(errors.RecallError, ValueError)
    assert issubclass(errors.UnsafePathError, errors.WriteError)
    e = errors.NotRegularError(0, "not a regular file (FIFO); skipped", "/x")
    assert e.filename == "/x" and e.status == 400


def test_status_is_per_class_and_overridable_per_instance() -> None:
    assert errors.NodeNotFoundError("x").status == 404
    assert errors.UnknownApproval("x").status == 404 and errors.ApprovalError("x").status == 409
    assert errors.RateLimitedError("p", "slow").status == 429
    assert errors.WriteError("x", status=423).status == 423
    assert errors.ProviderError("p", "bad", 400).upstream_status == 400
    assert errors.ProviderError("p", "bad", 400).status == 502


@pytest.mark.parametrize("exc", [errors.NodeNotFoundError("no node 'x'"),
                                 errors.ConfigError("bad value")])
def test_one_body_shape(exc: OpenCortexError) -> None:
    assert errors.body_of(exc) == {"ok": False, "error": str(exc),
                                   "type": type(exc).__name__, "status": exc.status}


def test_cli_json_error_is_the_http_error_body(memex: Path, tmp_path: Path) -> None:
    """The same failure (an unknown node) through ``--json`` and through the daemon."""
    from starlette.testclient import TestClient

    from opencortex.cli import cli
    from opencortex.memex import Memex
    from opencortex.server import create_app

    r = CliRunner().invoke(cli, ["todo", "no-such-node-anywhere", "DONE", "--memex",
                                 str(memex), "--index", str(tmp_path / "i.db"), "--json"])
    cli_body = json.loads(r.output)
    with Memex(memex, tmp_path / "i.db") as m:
        m.sync()
        app = create_app(m, token="t" * 20, heartbeat=0, watch=0)
        with TestClient(app, base_url="http://127.0.0.1") as c:
            resp = c.get("/v1/nodes/no-such-node-anywhere",
                         headers={"Authorization": "Bearer " + "t" * 20})
    http_body = resp.json()
    assert r.exit_code == 1 and resp.status_code == 404
    assert set(cli_body) == set(http_body) == {"ok", "error", "type", "status"}
    assert cli_body["status"] == http_body["status"] == 404
    assert cli_body["type"] == "NodeNotFoundError"
