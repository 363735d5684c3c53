"""A recall session keeps its boundary: the memex, the sources (``--source``) and every wider
search the person admitted travel with the session, so a reply needs no flags — the README's
``opencortex recall --session ID --reply "…"`` as written, as a real subprocess, over a real
git history."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ..conftest import REPO
from .test_engine import NOW, _cases, _generator


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("recall-boundary") / "corpus"
    _generator().generate(out, distractors=6, now=NOW)
    return out


def _cli(*args: str, cwd: Path) -> dict:
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    r = subprocess.run([sys.executable, "-c", "from opencortex.cli import main; main()",
                        "recall", *args, "--json"],
                       capture_output=True, text=True, env=env, cwd=cwd, timeout=300)
    assert r.returncode == 0, r.stderr + r.stdout
    return json.loads(r.stdout)


def test_a_reply_with_no_flags_searches_the_first_turns_sources(corpus, tmp_path):
    case = _cases(corpus)["git-ttl"]
    repo = corpus / "repo"
    index = tmp_path / "i.sqlite3"
    # an unrelated cwd and no default memex: only the session can say where to look
    first = _cli(case["cue"], "--source", f"git:{repo}", "--memex", str(corpus / "memex"),
                 "--index", str(index), "--no-defaults", "--now", NOW.isoformat(),
                 cwd=tmp_path)
    assert first["state"] == "presented", first
    roots = {r["root"] for r in first["searched"]["roots"]}
    assert f"git:{repo.resolve()}" in roots or f"git:{repo}" in roots

    second = _cli("--session", first["session"], "--reply", "the one about the cache expiry",
                  cwd=tmp_path)
    assert second["state"] in ("presented", "asked", "offered"), second
    again = {r["root"] for r in second["searched"]["roots"]}
    assert roots <= again, (roots, again)  # nothing of the first boundary was lost
    git_root = next(r for r in second["searched"]["roots"] if r["root"].startswith("git:")
                    and str(repo.name) in r["root"])
    assert git_root["records"] > 0  # the history was searched, not merely listed
    if second["state"] == "presented":
        assert any(case["target"]["id"] in m["locator"]
                   for m in second["recognizable"]["members"])
    # the memex of the first turn, not the (empty) default one
    assert any(r["root"].startswith("notes:") and str(corpus / "memex") in r["root"]
               for r in second["searched"]["roots"])


def test_sources_named_on_a_reply_widen_never_narrow(corpus, tmp_path):
    from opencortex.memex import Memex
    from opencortex.recall.engine import Recall, parse_source, session_boundary

    m = Memex(corpus / "memex", tmp_path / "i.sqlite3")
    try:
        e = Recall(m, [parse_source(f"git:{corpus / 'repo'}")], defaults=False,
                   state_dir=tmp_path / "state", gateway=False)
        rnd = e.start(_cases(corpus)["git-ttl"]["cue"], now=NOW)
        kept = session_boundary(rnd.session, tmp_path / "state")
        assert kept["memex"] == str((corpus / "memex").resolve())
        assert any(r.startswith("git:") for r in kept["roots"])
        wider = Recall(m, [parse_source(f"aider:{corpus / 'aider'}")], defaults=False,
                       state_dir=tmp_path / "state", gateway=False)
        wider.reply(rnd.session, "no, another one")
        roots = session_boundary(rnd.session, tmp_path / "state")["roots"]
        assert set(kept["roots"]) < set(roots)
    finally:
        m.close()
