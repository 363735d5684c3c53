#!/usr/bin/env bash
# Quick start: set everything up, then run the main job on the bundled example memex with
# the embedded defaults (SQLite index under the XDG cache; no server, no API key, no network).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
OC=.venv/bin/opencortex
# a fresh copy of the bundled example, so the agent's writes (session records, captures)
# never touch the repository
MEMEX="${XDG_CACHE_HOME:-$HOME/.cache}/opencortex/demo-memex"
rm -rf "$MEMEX" && mkdir -p "$(dirname "$MEMEX")" && cp -r examples/memex "$MEMEX"
echo "== index (+ embeddings, offline MiniLM)" && $OC index --memex "$MEMEX" --embed
echo "== router (train the offline intent classifier once; cached)" && $OC router train
echo "== agenda"   && $OC agenda  --memex "$MEMEX"
echo "== dashboard" && $OC agenda --dashboard --memex "$MEMEX"
echo "== projects" && $OC projects --memex "$MEMEX" --next
echo "== query 'tags:project todo'" && $OC query --memex "$MEMEX" todo tags:project --limit 10
echo "== query '+homelab-TODO=\"DONE\"' (Org's match syntax)" && $OC query --memex "$MEMEX" '+homelab-TODO="DONE"' --limit 10
echo "== search"   && $OC search "that caching fix" --memex "$MEMEX" -k 5
echo "== ask"      && $OC ask "what did I write about vector clocks and then what's on my agenda" --memex "$MEMEX"
echo "== recall"   && $OC recall "that note a while ago about when to invalidate the cache" \
                                 --memex "$MEMEX" --no-defaults
echo "== doctor"   && $OC doctor  --memex "$MEMEX"
