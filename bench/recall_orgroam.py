"""Recall on a second real history: the org-roam git bundle and its dev cues
(``../shared/eval/recall/``), scored as the person would meet them.

    .venv/bin/python bench/recall_orgroam.py [--data DIR] [--half a|b|all] [--json] [-v]

The bundle is cloned into a temp dir and left with a detached HEAD and no local branch (a
fresh clone of a bundle, a CI checkout): recall must search it through HEAD's history.  The
clone is the configured repository root (``OPENCORTEX_RECALL_SOURCES=git:…``, no default
transcript folders), the memex an empty folder beside it.  Each cue starts a recall; the
first presented candidate must hold an expected commit; if not, the cue's ``more`` is the
person's one added cue (``reply``), and that presentation must.  Every presented candidate
must have at most 8 members and present no record twice (one bullet per record); the
repository must be byte-identical afterwards (``git status`` and the refs unchanged).

``--half a`` / ``--half b`` scores the even / odd cues only (tune on one, report the other).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("OPENCORTEX_NO_PROGRESS", "1")
os.environ["OPENCORTEX_RECALL_DEFAULTS"] = "0"

DATA = Path(__file__).resolve().parents[2] / "shared" / "eval" / "recall"
NOW = "2026-03-01T12:00:00+00:00"  # after the bundle's last commit: reproducible time words
MAX_MEMBERS = 8


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                          text=True).stdout


def clone_detached(bundle: Path, dest: Path) -> None:
    """Clone ``bundle`` and leave HEAD detached with no local branch (what a bundle or CI
    checkout gives): the history is reachable from HEAD only."""
    subprocess.run(["git", "clone", "-q", str(bundle), str(dest)], check=True)
    git(dest, "checkout", "-q", "--detach")
    for ref in git(dest, "for-each-ref", "--format=%(refname:short)", "refs/heads").split():
        git(dest, "branch", "-q", "-D", ref)
    for ref in git(dest, "for-each-ref", "--format=%(refname)", "refs/remotes").split():
        git(dest, "update-ref", "-d", ref)


def fingerprint(repo: Path) -> str:
    return git(repo, "status", "--porcelain", "--ignored") + git(
        repo, "for-each-ref") + git(repo, "rev-parse", "HEAD")


def check_round(rnd: dict, expect: list[str]) -> dict:
    """Whether ``rnd`` presents an expected commit, with the shape checks."""
    rz = rnd.get("recognizable") or {}
    members = [m["locator"] for m in rz.get("members", [])]
    shas = [loc.rsplit("@", 1)[-1] for loc in members]
    hit = rnd.get("state") == "presented" and len(members) <= MAX_MEMBERS and any(
        s.startswith(e) for s in shas for e in expect)
    bullets = [r["record"] for r in rnd.get("records", [])]
    return {"found": hit, "state": rnd.get("state"), "members": len(members),
            "twice": len(bullets) != len(set(bullets)) or len(members) != len(set(members)),
            "lead": (rz.get("members") or [{}])[0].get("gist", "")[:70] if rz else None,
            "lead_sha": shas[0][:7] if shas else None}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--half", choices=("a", "b", "all"), default="all")
    ap.add_argument("--keep-branch", action="store_true",
                    help="leave the clone's local branch (default: detached, no branch)")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--verbose", "-v", action="store_true")
    args = ap.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="recall-orgroam-"))
    for var in ("XDG_STATE_HOME", "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME"):
        os.environ[var] = str(tmp / var.lower())
    repo = tmp / "org-roam"
    if args.keep_branch:
        subprocess.run(["git", "clone", "-q", str(args.data / "org-roam.bundle"), str(repo)],
                       check=True)
    else:
        clone_detached(args.data / "org-roam.bundle", repo)
    before = fingerprint(repo)
    os.environ["OPENCORTEX_RECALL_SOURCES"] = f"git:{repo}"
    (tmp / "memex").mkdir()
    cases = [json.loads(x) for x in (args.data / "recall-orgroam-dev.jsonl").read_text()
             .splitlines() if x.strip()]
    if args.half != "all":
        cases = [c for i, c in enumerate(cases) if i % 2 == (0 if args.half == "a" else 1)]

    from opencortex.config import load_settings
    from opencortex.memex import Memex
    from opencortex.recall.engine import Recall

    settings = load_settings()
    memex = Memex(tmp / "memex", tmp / "index.sqlite3", settings=settings)
    engine = Recall(memex)
    t0 = time.perf_counter()
    summary = engine.refresh()
    index_s = time.perf_counter() - t0
    now = dt.datetime.fromisoformat(NOW)
    rows = []
    for case in cases:
        t1 = time.perf_counter()
        first = engine.start(case["cue"], invoked=True, now=now).to_dict()
        r1 = check_round(first, case["expect"])
        r2 = r1
        if not r1["found"] and first["state"] in ("presented", "asked", "offered"):
            second = engine.reply(first["session"], case["more"]).to_dict()
            r2 = check_round(second, case["expect"])
        rows.append({"cue": case["cue"][:60], "whole": case["whole"], "first": r1,
                     "after": r2, "seconds": round(time.perf_counter() - t1, 2)})
        if args.verbose:
            print(f"{'✓' if r1['found'] else '·'}{'✓' if r2['found'] else '·'} "
                  f"{case['whole']:>7} {r1['lead_sha']} {r1['lead']!r:.50} | "
                  f"{r2['lead_sha']} {r2['lead']!r:.50} | {case['cue'][:60]}",
                  file=sys.stderr)
    n = len(rows)
    shape_ok = all(r[k]["members"] <= MAX_MEMBERS and not r[k]["twice"]
                   for r in rows for k in ("first", "after"))
    agg = {"cases": n, "half": args.half,
           "found_first": sum(r["first"]["found"] for r in rows),
           "found_after_one_added_cue": sum(r["after"]["found"] for r in rows),
           "max_members": max((r[k]["members"] for r in rows for k in ("first", "after")),
                              default=0),
           "any_record_twice": any(r[k]["twice"] for r in rows for k in ("first", "after")),
           "shape_ok": shape_ok,
           "repository_unchanged": fingerprint(repo) == before,
           "commits_indexed": summary.commits_added, "index_s": round(index_s, 1),
           "median_case_s": sorted(r["seconds"] for r in rows)[n // 2] if n else None}
    if args.json:
        print(json.dumps({"summary": agg, "cases": rows}, indent=1))
        return
    print(f"org-roam recall over {n} cues ({args.half}): first {agg['found_first']}/{n}, "
          f"after one added cue {agg['found_after_one_added_cue']}/{n}; max members "
          f"{agg['max_members']}, a record twice: {agg['any_record_twice']}; repository "
          f"unchanged: {agg['repository_unchanged']}; {agg['commits_indexed']} commits "
          f"indexed in {agg['index_s']} s; median cue {agg['median_case_s']} s")


if __name__ == "__main__":
    main()
