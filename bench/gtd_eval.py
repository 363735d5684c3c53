"""GTD end-to-end: the shared checker (../shared/tools/gtd_eval.py) run with this checkout's
own `opencortex` on a fresh copy of examples/memex per request, judged by Emacs org-element.

Run: .venv/bin/python bench/gtd_eval.py [--oracle] [--skill] [--cases FILE] [--only N]
     [--workdir DIR] [--cold]

--cases   another cases file in the checker's schema, e.g. bench/data/gtd-own.jsonl (the
          project's own blind set: 50 everyday requests on other topics than the dev set).
--oracle  checks the cases themselves (their explicit CLI commands instead of `ask`).
--skill   sends each request to the gtd skill directly (`/gtd …`): the skill's share of the
          result without the router's.
--cold    give every case its own model caches as the checker sets them up (the embedder's graph
          is rebuilt and the router's classifier retrained per case: ~1-2 min each on a busy
          machine, near the checker's 120 s timeout).  By default the cases share one warm copy
          of those two caches (WORKDIR/models): what every request after the first one sees; the
          index and everything else stay per case.
Prints the checker's report, then one JSON line with the pass ratio.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHECKER = ROOT.parent / "shared" / "tools" / "gtd_eval.py"


def _wrapper(dest: Path, skill: bool, models: Path | None) -> Path:
    """A command running this checkout's CLI (the checker calls it like `opencortex`)."""
    src = shlex.quote(str(ROOT / "src"))
    py = shlex.quote(sys.executable)
    route = ('if [ "$1" = ask ]; then shift; t="$1"; shift; set -- ask "/gtd $t" "$@"; fi\n'
             if skill else "")
    share = ""
    if models is not None:  # the case's cache dir gets links to the shared model caches
        m = shlex.quote(str(models))
        share = ('c="${XDG_CACHE_HOME:-$HOME/.cache}/opencortex"; mkdir -p "$c"\n'
                 f'for d in embed router; do mkdir -p {m}/$d; '
                 f'[ -e "$c/$d" ] || ln -s {m}/$d "$c/$d"; done\n')
    dest.write_text("#!/bin/sh\n" + share + route + f"PYTHONPATH={src} exec {py} -c "
                    "'from opencortex.cli import main; main()' \"$@\"\n")
    dest.chmod(dest.stat().st_mode | stat.S_IXUSR)
    return dest


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--oracle", action="store_true")
    ap.add_argument("--skill", action="store_true")
    ap.add_argument("--cases", default=None)
    ap.add_argument("--only", type=int, default=None)
    ap.add_argument("--workdir", default=None)
    ap.add_argument("--cold", action="store_true")
    ap.add_argument("--checker", default=str(CHECKER))
    a = ap.parse_args()
    if not Path(a.checker).exists():
        print(f"checker not found: {a.checker}", file=sys.stderr)
        return 2
    work = Path(a.workdir or tempfile.mkdtemp(prefix="gtd-eval-"))
    work.mkdir(parents=True, exist_ok=True)
    oc = _wrapper(work / "opencortex", a.skill, None if a.cold else work / "models")
    cmd = [sys.executable, a.checker, str(oc), str(ROOT / "examples" / "memex"), str(work)]
    cmd += ["--oracle"] if a.oracle else []
    cmd += ["--cases", a.cases] if a.cases else []
    cmd += ["--only", str(a.only)] if a.only is not None else []
    p = subprocess.run(cmd, capture_output=True, text=True, env=os.environ.copy())
    sys.stdout.write(p.stdout)
    sys.stderr.write(p.stderr)
    m = re.search(r"(\d+)/(\d+) requests", p.stdout)
    passed, total = (int(m.group(1)), int(m.group(2))) if m else (0, 0)
    print(json.dumps({"bench": "gtd_eval", "mode": "oracle" if a.oracle else
                      "skill" if a.skill else "ask", "passed": passed, "total": total,
                      "ratio": round(passed / total, 3) if total else None}))
    return p.returncode


if __name__ == "__main__":
    raise SystemExit(main())
