#!/usr/bin/env bash
# Quick start: set everything up, then run the main job on the bundled example memex with
# the embedded defaults (SQLite index under the XDG cache; no server, no API key, no network).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
OC=.venv/bin/opencortex
MEMEX=examples/memex
echo "== index"    && $OC index   --memex "$MEMEX"
echo "== agenda"   && $OC agenda  --memex "$MEMEX"
echo "== projects" && $OC projects --memex "$MEMEX" --next
echo "== query 'tags:project todo'" && $OC query --memex "$MEMEX" todo tags:project --limit 10
echo "== doctor"   && $OC doctor  --memex "$MEMEX"
