"""Generate a realistic past-work corpus for recall, plus evaluation cases (deterministic).

    python bench/recall_fixtures.py OUT_DIR [--distractors N] [--sessions N --commits N]
                                    [--seed S] [--now ISO]

Layout under OUT_DIR (every path absolute in the records, so sessions and commits can be
joined by cwd + time adjacency):

- ``claude/projects/<slug>/<uuid>.jsonl``           Claude Code sessions (CLAUDE_CONFIG_DIR root)
- ``codex/sessions/YYYY/MM/DD/rollout-*.jsonl``       Codex CLI rollouts (CODEX_HOME root)
- ``gemini/tmp/<hash>/chats/session-*.json[l]``     Gemini CLI chats (legacy JSON and JSONL)
- ``aider/<project>/.aider.chat.history.md``        Aider histories
- ``memex/notes/*.org``, ``memex/journal.org``       Org notes with :ID:, CREATED, CLOSED
- ``memex/sessions/YYYY/MM/DD-<id>.org``            OpenCortex conversations (SessionRecorder)
- ``repo/``                                         a git repository built with fast-import
- ``cases.jsonl``                                   evaluation cases (see ``Case`` fields)
- ``corpus.json``                                   counts, and lines deliberately broken

``generate(out, seed=0, now=..., distractors=60, sessions=None, commits=None)`` returns the
cases path. ``sessions``/``commits`` switch on scale mode: that many extra Claude Code/Codex
sessions and git commits (mixed topics) on top of the stories, cases unchanged.

Stdlib only, plus ``git`` on PATH; the OpenCortex SessionRecorder writes the OpenCortex
conversations when it can be imported (a same-format fallback writer otherwise).
"""

from __future__ import annotations

import argparse
import bisect
import calendar
import datetime as dt
import hashlib
import json
import os
import random
import re
import shutil
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

UTC = dt.UTC
DEFAULT_NOW = dt.datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
REPO_NAME = "tallyho"
ME = ("Robin Park", "robin@tallyho.dev")
PEOPLE = {
    "sam": ("Sam Okafor", "sam@tallyho.dev"),
    "priya": ("Priya Raman", "priya@tallyho.dev"),
    "lena": ("Lena Vogt", "lena@tallyho.dev"),
    "alex": ("Alex Kim", "alex@tallyho.dev"),
    "me": ME,
}
OTHER_REPOS = ["shopfront", "infra-scripts", "datalake", "mobile-app", "blog", "ledger-api"]


# ---------------------------------------------------------------------------------------
# conversations and commits, independent of format


@dataclass
class Tool:
    name: str
    args: dict[str, Any]
    output: str
    error: bool = False


@dataclass
class Conv:
    """One session in any format; turns are ("person"|"assistant", text) or ("tool", Tool)."""

    source: str
    sid: str
    start: dt.datetime
    cwd: str
    branch: str | None
    turns: list[tuple[str, Any]]
    title: str | None = None
    step: int = 40  # mean seconds between turns
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class Commit:
    when: dt.datetime
    author: tuple[str, str]
    message: str
    edits: list[tuple]  # ("set", path, text) | ("replace", path, old, new) | ("append", path, text)
    branch: str | None = None
    key: str | None = None  # story key, to find the sha afterwards


def U(text: str) -> tuple[str, str]:
    return ("person", text)


def A(text: str) -> tuple[str, str]:
    return ("assistant", text)


def T(name: str, args: dict[str, Any], output: str, error: bool = False) -> tuple[str, Tool]:
    return ("tool", Tool(name, args, output, error))


def _uuid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def _iso(t: dt.datetime) -> str:
    return t.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"


# ---------------------------------------------------------------------------------------
# dates relative to now


def days_ago(now: dt.datetime, days: int, hour: int = 10, minute: int = 0) -> dt.datetime:
    return (now - dt.timedelta(days=days)).replace(hour=hour, minute=minute, second=0,
                                                   microsecond=0)


def recent(now: dt.datetime, month: int, day: int, hour: int = 10, minute: int = 0,
           min_gap: int = 20) -> dt.datetime:
    """The latest month/day at least ``min_gap`` days before now."""
    year = now.year
    while True:
        t = dt.datetime(year, month, day, hour, minute, tzinfo=UTC)
        if t <= now - dt.timedelta(days=min_gap):
            return t
        year -= 1


def month_range(t: dt.datetime) -> tuple[dt.datetime, dt.datetime]:
    last = calendar.monthrange(t.year, t.month)[1]
    return (t.replace(day=1, hour=0, minute=0), t.replace(day=last, hour=23, minute=59))


def season_range(t: dt.datetime, months: tuple[int, int]) -> tuple[dt.datetime, dt.datetime]:
    a = dt.datetime(t.year, months[0], 1, tzinfo=UTC)
    last = calendar.monthrange(t.year, months[1])[1]
    return a, dt.datetime(t.year, months[1], last, 23, 59, tzinfo=UTC)


# ---------------------------------------------------------------------------------------
# the repository's starting files (stories edit these)

BASE_FILES: dict[str, str] = {
    "README.md": "# tallyho\n\nOrders, invoices and pricing for small shops.\n\n## Install\n\n"
                 "    pip install -r requirements.txt\n    make dev\n",
    "requirements.txt": "flask==3.0.3\nrequests==2.31.0\nredis==5.0.1\nsqlalchemy==2.0.29\n"
                        "stripe==8.4.0\npytest==8.1.1\n",
    "requirements.lock": "# generated\nflask==3.0.3\nrequests==2.31.0\nredis==5.0.1\n",
    ".github/workflows/ci.yml": "name: ci\non: [push, pull_request]\njobs:\n  test:\n"
                                "    runs-on: ubuntu-latest\n    steps:\n"
                                "      - uses: actions/checkout@v4\n"
                                "      - uses: actions/setup-python@v5\n"
                                "        with:\n          python-version: '3.12'\n"
                                "      - run: pip install -r requirements.txt\n"
                                "      - run: pytest -q\n",
    "src/tallyho/__init__.py": "__version__ = '0.9.0'\n",
    "src/tallyho/auth/login.py": "from flask import redirect, request, session\n\n\n"
                                 "def login():\n    user = check_password(request.form)\n"
                                 "    if not user:\n        return redirect('/login?failed=1')\n"
                                 "    session['uid'] = user.id\n    return redirect('/dashboard')\n",
    "tests/test_login.py": "import time\n\n\n"
                           "def test_login_redirect(browser, live_server):\n"
                           "    browser.get(live_server.url + '/login')\n"
                           "    browser.fill('email', 'a@b.c')\n    browser.fill('password', 'pw')\n"
                           "    browser.click('submit')\n    time.sleep(2)\n"
                           "    assert browser.current_url.endswith('/dashboard')\n",
    "src/tallyho/pricing/cache.py": "import json\n\nimport redis\n\n\nclass PriceCache:\n"
                                    "    def __init__(self, client: redis.Redis, ttl_seconds: int = 900):\n"
                                    "        self.client = client\n        self.ttl = ttl_seconds\n\n"
                                    "    def put(self, sku: str, price: dict) -> None:\n"
                                    "        self.client.set(f'price:{sku}', json.dumps(price), px=self.ttl)\n\n"
                                    "    def get(self, sku: str):\n"
                                    "        raw = self.client.get(f'price:{sku}')\n"
                                    "        return json.loads(raw) if raw else None\n",
    "src/tallyho/payments/webhooks.py": "import stripe\n\n\ndef handle_event(payload, sig):\n"
                                        "    event = stripe.Webhook.construct_event(payload, sig, SECRET)\n"
                                        "    if event.type == 'invoice.paid':\n"
                                        "        mark_paid(event.data.object.id)\n    return 200\n",
    "migrations/0041_orders_status.sql": "ALTER TABLE orders ADD COLUMN status text;\n",
    "Dockerfile": "FROM python:3.12\nWORKDIR /app\nCOPY . .\nRUN pip install -r requirements.txt\n"
                  "CMD [\"gunicorn\", \"tallyho.app:app\"]\n",
    "web/src/SettingsPanel.tsx": "export function SettingsPanel() {\n  return (\n    <form>\n"
                                 "      <h2>Account settings</h2>\n"
                                 "      <label>Display name</label>\n"
                                 "      <button>Save changes</button>\n    </form>\n  );\n}\n",
    "src/tallyho/admin/orders.py": "def order_list(request):\n"
                                   "    orders = Order.objects.filter(shop=request.shop)[:200]\n"
                                   "    return render('orders.html', rows=[(o, o.customer.name) "
                                   "for o in orders])\n",
}


# ---------------------------------------------------------------------------------------
# distractor vocabulary: topics, each with its own words, mixed by templates

TOPICS: dict[str, dict[str, list[str]]] = {
    "caching": dict(
        area=["cache"], files=["src/tallyho/cache.py", "src/tallyho/memo.py", "app/cache/lru.ts"],
        nouns=["cache hit rate", "eviction policy", "memoized lookup", "cache key", "LRU size",
               "warm-up job", "session cache"],
        problems=["is thrashing", "returns stale values", "grows without bound",
                  "misses on every request", "is shared between tenants"],
        fixes=["add a size bound", "namespace the keys by tenant", "warm it at startup",
               "invalidate on write", "switch to an LRU"]),
    "auth": dict(
        area=["auth"], files=["src/tallyho/auth/tokens.py", "src/tallyho/auth/oauth.py",
                              "api/middleware/session.go"],
        nouns=["refresh token", "session cookie", "password reset link", "SSO callback",
               "rate limiter on sign-in", "API key scope"],
        problems=["expires too soon", "is not rotated", "leaks into logs",
                  "fails for users with plus signs in the email", "accepts an old signature"],
        fixes=["rotate it on every use", "mark the cookie SameSite=Lax", "hash it before storing",
               "lower the lockout threshold", "check the issuer claim"]),
    "ci": dict(
        area=["ci"], files=[".github/workflows/ci.yml", ".github/workflows/release.yml",
                            "Makefile", "tox.ini"],
        nouns=["matrix build", "lint job", "release workflow", "coverage upload", "nightly job",
               "artifact retention"],
        problems=["times out on macOS", "runs twice on every push", "is red since Tuesday",
                  "uploads nothing", "uses a deprecated action"],
        fixes=["pin the action versions", "split the slow tests into their own job",
               "skip it on docs-only changes", "bump the runner image", "add a concurrency group"]),
    "migrations": dict(
        area=["db"], files=["migrations/0050_invoices.sql", "migrations/env.py",
                            "src/tallyho/db/models.py"],
        nouns=["invoice table migration", "backfill script", "foreign key on customers",
               "alembic revision", "nullable column", "down migration"],
        problems=["fails on the staging snapshot", "takes forty minutes", "has two heads",
                  "drops data on rollback", "breaks the old release"],
        fixes=["batch the backfill", "merge the heads", "add a default first",
               "split it into expand and contract steps", "write the down step"]),
    "pricing": dict(
        area=["pricing"], files=["src/tallyho/pricing/rules.py", "src/tallyho/pricing/tax.py",
                                 "src/tallyho/pricing/coupons.py"],
        nouns=["coupon stacking", "VAT rounding", "volume discount", "currency conversion",
               "price rule engine", "trial extension"],
        problems=["rounds the wrong way", "applies twice", "ignores the shop currency",
                  "gives a negative total", "is off by a cent"],
        fixes=["round half even at the end", "apply coupons in a fixed order",
               "store amounts in minor units", "clamp the total at zero", "cache the FX rate daily"]),
    "docs": dict(
        area=["docs"], files=["docs/api.md", "docs/deploy.md", "CONTRIBUTING.md", "docs/faq.md"],
        nouns=["API reference", "changelog", "contributing guide", "architecture page",
               "FAQ", "upgrade notes"],
        problems=["is out of date", "has broken links", "contradicts the code",
                  "misses the new endpoints", "is unreadable on mobile"],
        fixes=["regenerate it from the OpenAPI spec", "add a link checker", "rewrite the intro",
               "document the env vars", "add examples for each endpoint"]),
    "refactor": dict(
        area=["core"], files=["src/tallyho/orders/service.py", "src/tallyho/util.py",
                              "src/tallyho/orders/repository.py"],
        nouns=["order service", "utils module", "repository layer", "god object", "settings loader",
               "event bus"],
        problems=["is eight hundred lines long", "imports everything", "has circular imports",
                  "mixes IO and logic", "duplicates the validation"],
        fixes=["split it by responsibility", "move the pure functions out",
               "inject the clock", "replace the inheritance with composition",
               "delete the dead code paths"]),
    "ui": dict(
        area=["web"], files=["web/src/OrderTable.tsx", "web/src/Navbar.tsx", "web/src/theme.css"],
        nouns=["order table", "dark mode", "navbar", "date picker", "empty state", "toast"],
        problems=["jumps when it loads", "is unreadable in dark mode", "overflows on phones",
                  "loses focus after save", "flickers"],
        fixes=["reserve the row height", "use the theme tokens", "wrap the columns",
               "return focus to the trigger", "debounce the re-render"]),
    "deployment": dict(
        area=["deploy"], files=["deploy/k8s/web.yaml", "deploy/terraform/main.tf", "Procfile"],
        nouns=["rolling deploy", "health check", "blue-green switch", "terraform plan",
               "container limits", "readiness probe"],
        problems=["kills requests in flight", "passes while the app is down",
                  "wants to recreate the database", "OOMs under load", "never becomes ready"],
        fixes=["add a preStop sleep", "check the database in the probe",
               "import the existing resource", "raise the memory limit", "drain before shutdown"]),
    "tests": dict(
        area=["tests"], files=["tests/test_orders.py", "tests/conftest.py", "tests/test_invoices.py"],
        nouns=["fixture factory", "snapshot test", "integration suite", "mock of the clock",
               "test database", "property test"],
        problems=["is slow", "depends on test order", "leaks state between tests",
                  "fails at midnight", "needs network"],
        fixes=["use a transaction per test", "freeze the clock", "parametrize it",
               "mark it as integration", "stub the HTTP client"]),
    "performance": dict(
        area=["perf"], files=["src/tallyho/reports/build.py", "src/tallyho/search/index.py",
                              "src/tallyho/api/serializers.py"],
        nouns=["report builder", "search index", "JSON serializer", "p95 latency",
               "memory profile", "hot loop"],
        problems=["takes twelve seconds", "allocates on every row", "spikes at month end",
                  "holds a lock too long", "is CPU bound"],
        fixes=["stream the rows", "precompute the totals", "use orjson",
               "add an index on created_at", "move it to a background job"]),
}
GREET = ["", "", "hey, ", "ok so ", "quick one: ", "morning! ", "hmm, "]
WHO = ["Sam", "Priya", "Lena", "Alex", "a customer", "support", "the on-call"]
FN_WORDS = ["load", "save", "parse", "render", "sync", "build", "check", "merge", "split", "fetch"]


def _mix(rng: random.Random, topic: str) -> dict[str, str]:
    t = TOPICS[topic]
    return {k: rng.choice(v) for k, v in t.items()} | {
        "noun2": rng.choice(t["nouns"]), "fix2": rng.choice(t["fixes"]),
        "greet": rng.choice(GREET), "who": rng.choice(WHO), "n": str(rng.randint(3, 240))}


P_OPEN = ["{greet}the {nouns} {problems}, can you take a look at {files}?",
          "{greet}{who} says the {nouns} {problems} again. Where would you start?",
          "{greet}I want to {fixes}: the {nouns} in {files} {problems}.",
          "{greet}can you figure out why the {nouns} {problems}?"]
P_MORE = ["ok, and {fix2} while you're there", "looks right. does the {noun2} need changes too?",
          "run the tests again please", "can we keep the old behaviour behind a flag?",
          "that's not it, the {noun2} {problems} even without that change",
          "good, now write a short summary for the PR", "what about {who}'s case?"]
A_TEXT = ["I read {files}. The {nouns} {problems} because nothing enforces it; I'll {fixes}.",
          "Done: I {fix2} in {files}. {n} tests pass.",
          "The {noun2} is fine; the problem is in {files}, which I've now changed to {fixes}.",
          "Here is a plan: first {fixes}, then {fix2}, then re-run the suite.",
          "I couldn't reproduce it locally; the logs suggest the {noun2} {problems}."]


def _fmt(rng: random.Random, templates: list[str], m: dict[str, str]) -> str:
    return rng.choice(templates).format(**m)


def random_turns(rng: random.Random, topic: str, n_person: int, cwd: str) -> list:
    turns: list = []
    for i in range(n_person):
        m = _mix(rng, topic)
        turns.append(U(_fmt(rng, P_OPEN if i == 0 else P_MORE, m)))
        if rng.random() < 0.6:
            f = m["files"]
            if rng.random() < 0.5:
                body = "\n".join(f"{j + 1:>4}  # {rng.choice(FN_WORDS)} {m['nouns']}"
                                 for j in range(rng.randint(3, 8)))
                turns.append(T("Read", {"file_path": f"{cwd}/{f}"}, body))
            else:
                turns.append(T("Bash", {"command": f"pytest -q tests -k {m['area']}"},
                               f"{m['n']} passed, {rng.randint(0, 2)} failed in "
                               f"{rng.uniform(0.5, 30):.2f}s"))
        turns.append(A(_fmt(rng, A_TEXT, m)))
    return turns


# ---------------------------------------------------------------------------------------
# stories: the targets of the cases and their near misses


@dataclass
class Case:
    id: str
    cue: str
    added_cue: str
    whole: str
    kind: str
    source: str
    key: str  # story key: a Conv sid, a Commit key, or a note key
    when: dt.datetime
    time_range: tuple[dt.datetime, dt.datetime] | None = None
    turn_contains: str | None = None
    near: list[str] = field(default_factory=list)  # keys of near-miss records


@dataclass
class Note:
    key: str
    file: str  # relative to memex
    title: str
    body: str
    when: dt.datetime
    todo: str | None = None  # "DONE" adds a CLOSED timestamp
    tags: list[str] = field(default_factory=list)
    journal: bool = False


@dataclass
class World:
    out: Path
    now: dt.datetime
    rng: random.Random
    convs: list[Conv] = field(default_factory=list)
    commits: list[Commit] = field(default_factory=list)
    notes: list[Note] = field(default_factory=list)
    cases: list[Case] = field(default_factory=list)
    timeline: list[tuple[dt.datetime, str]] = field(default_factory=list)

    @property
    def repo(self) -> str:
        return str(self.out / "repo")

    def other(self, name: str) -> str:
        return str(self.out / "elsewhere" / name)

    def aider_dir(self, name: str) -> str:
        return str(self.out / "aider" / name)

    def conv(self, source: str, key: str, start: dt.datetime, cwd: str, branch: str | None,
             turns: list, extra_fmt: str = "jsonl", **kw: Any) -> str:
        # ids never reveal the story: uuids, or OpenCortex's chat-<hex> session names
        sid = (f"chat-{self.rng.getrandbits(40):010x}" if source == "opencortex"
               else _uuid(self.rng))
        self.convs.append(Conv(source, sid, start, cwd, branch, turns,
                               extra={"key": key, "fmt": extra_fmt}, **kw))
        return key


def stories(w: World) -> None:
    now, repo = w.now, w.repo
    c = w.cases

    # --- 1. flaky login test (claude) + retry removal commit (git) -------------------------
    t_retry_add = days_ago(now, 118, 15, 10)
    w.commits.append(Commit(t_retry_add + dt.timedelta(minutes=35), PEOPLE["alex"],
                            "test: retry flaky login redirect test up to 3 times\n\n"
                            "It fails about one run in ten on CI; retry until we find the cause.",
                            [("replace", "tests/test_login.py", "import time\n\n\n",
                              "import time\n\nfrom flaky import retry\n\n\n"),
                             ("replace", "tests/test_login.py", "def test_login_redirect",
                              "@retry(times=3)\ndef test_login_redirect")],
                            branch="test/retry-login", key="git-retry-add"))
    w.conv("codex", "near-codex-retry-add", t_retry_add, repo, "test/retry-login", [
        U("test_login_redirect is flaky on CI again, maybe one run in ten. can we just retry it "
          "for now?"),
        T("shell", {"command": ["pytest", "-q", "tests/test_login.py", "--count", "20"]},
          "2 failed, 18 passed"),
        A("It fails intermittently when the redirect takes longer than the fixed sleep. As a "
          "stopgap I added @retry(times=3) from the flaky plugin; the underlying race remains."),
        U("fine, commit it as a stopgap"),
        A("Committed on test/retry-login.")])
    t_flaky = days_ago(now, 19, 14, 5)
    w.commits.append(Commit(t_flaky + dt.timedelta(minutes=52), ME,
                            "test: drop retry wrapper from test_login_redirect\n\n"
                            "Wait for the dashboard URL instead of sleeping 2s; the retry hid a "
                            "race between the redirect and the assertion.",
                            [("replace", "tests/test_login.py",
                              "import time\n\nfrom flaky import retry\n\n\n", ""),
                             ("replace", "tests/test_login.py", "@retry(times=3)\n", ""),
                             ("replace", "tests/test_login.py",
                              "    time.sleep(2)\n    assert browser.current_url.endswith"
                              "('/dashboard')\n",
                              "    browser.wait_for_url('**/dashboard', timeout=10)\n")],
                            branch="fix/login-test-race", key="git-retry-removed"))
    w.conv("claude-code", "cc-flaky-login", t_flaky, repo, "fix/login-test-race", [
        U("test_login_redirect keeps failing on CI every few runs even with the retry. I'd like "
          "to actually fix it instead of retrying."),
        T("Read", {"file_path": f"{repo}/tests/test_login.py"},
          "@retry(times=3)\ndef test_login_redirect(browser, live_server):\n    ...\n"
          "    time.sleep(2)\n    assert browser.current_url.endswith('/dashboard')"),
        A("The test sleeps a fixed 2 seconds and then asserts the URL. On a slow CI runner the "
          "redirect to /dashboard sometimes lands after the sleep, so the assertion races the "
          "navigation. The @retry(times=3) wrapper only hides that."),
        U("ok so remove the decorator and wait properly"),
        T("Edit", {"file_path": f"{repo}/tests/test_login.py",
                   "old_string": "    time.sleep(2)",
                   "new_string": "    browser.wait_for_url('**/dashboard', timeout=10)"},
          "The file has been updated."),
        T("Bash", {"command": "pytest -q tests/test_login.py --count 50"}, "50 passed in 41.2s"),
        A("Removed the retry decorator and replaced the sleep with wait_for_url; 50 runs in a "
          "row pass."),
        U("great, commit it"),
        T("Bash", {"command": "git commit -am 'test: drop retry wrapper from test_login_redirect'"},
          "[fix/login-test-race @SHA:git-retry-removed] test: drop retry wrapper from "
          "test_login_redirect\n 1 file changed, 2 insertions(+), 5 deletions(-)"),
        A("Committed.")])
    w.conv("claude-code", "near-cc-checkout-flaky", days_ago(now, 9, 11, 0), w.other("shopfront"),
           "main", [
               U("the checkout e2e test fails intermittently in the pipeline, can you look?"),
               T("Bash", {"command": "npx playwright test checkout.spec.ts --repeat-each 20"},
                 "3 failed, 17 passed"),
               A("The checkout spec depends on the real clock: the promo banner expires at "
                 "midnight UTC. I mocked Date in the test so it no longer flakes."),
               U("nice, thanks")])
    w.conv("claude-code", "near-cc-login-ratelimit", days_ago(now, 33, 16, 20), repo,
           "feat/login-rate-limit", [
               U("add rate limiting to the login endpoint, 5 attempts per minute per IP"),
               A("I added a sliding-window limiter in src/tallyho/auth/login.py and a test in "
                 "tests/test_login.py that checks the sixth attempt gets a 429."),
               U("the new login test fails on my machine"),
               A("It used the wall clock; I injected a fake clock so the window is deterministic.")])
    rng_fw = (now - dt.timedelta(days=35), now - dt.timedelta(days=10))
    c.append(Case("cc-flaky-login",
                  "that session a few weeks ago where we sorted out the login test that kept "
                  "failing randomly", "we ended up ripping out the retry thing instead of "
                  "keeping it", "session", "paraphrase (randomly failing ~ flaky/intermittent); "
                  "near misses: the earlier session that added the retry, a flaky checkout test, "
                  "another login-test session", "claude-code", "cc-flaky-login", t_flaky, rng_fw,
                  near=["near-codex-retry-add", "near-cc-checkout-flaky",
                        "near-cc-login-ratelimit"]))
    c.append(Case("git-retry-removed",
                  "the commit where the login test stopped being re-run on failure",
                  "it swapped a fixed sleep for waiting on the page address", "session",
                  "the wording is the opposite of the earlier commit that added the retry",
                  "git", "git-retry-removed", t_flaky + dt.timedelta(minutes=52),
                  near=["git-retry-add", "near-cc-login-ratelimit"]))

    # --- 2. pricing cache TTL in ms (claude, Sam) + fix commit (git) -----------------------
    t_ttl = recent(now, (now.month - 2) % 12 + 1, 14, 9, 40, min_gap=0)
    w.commits.append(Commit(t_ttl + dt.timedelta(minutes=70), ME,
                            "fix(pricing): pass cache TTL to redis as seconds\n\n"
                            "PriceCache used px= (milliseconds) with a value in seconds, so "
                            "entries lived 0.9 s instead of 15 min. Reported by Sam.",
                            [("replace", "src/tallyho/pricing/cache.py", "px=self.ttl",
                              "ex=self.ttl")], branch="fix/price-cache-ttl", key="git-ttl"))
    w.conv("claude-code", "cc-cache-ttl", t_ttl, repo, "fix/price-cache-ttl", [
        U("Sam noticed product prices on the storefront are recomputed on nearly every request, "
          "as if PriceCache isn't doing anything. Can you check src/tallyho/pricing/cache.py?"),
        T("Read", {"file_path": f"{repo}/src/tallyho/pricing/cache.py"},
          "self.client.set(f'price:{sku}', json.dumps(price), px=self.ttl)"),
        A("Found it: the TTL is 900 (meant as seconds) but it is passed as px=, which redis "
          "reads as milliseconds. Every entry expires after 0.9 seconds, so the cache is "
          "effectively empty."),
        U("ha. fix it and add a test that would have caught it"),
        T("Edit", {"file_path": f"{repo}/src/tallyho/pricing/cache.py", "old_string": "px=self.ttl",
                   "new_string": "ex=self.ttl"}, "The file has been updated."),
        A("Switched to ex= and added tests/test_price_cache.py asserting the key's TTL is "
          "within a second of 900."),
        U("commit"),
        T("Bash", {"command": "git commit -am 'fix(pricing): pass cache TTL to redis as seconds'"},
          "[fix/price-cache-ttl @SHA:git-ttl] fix(pricing): pass cache TTL to redis as seconds"),
        A("Done.")])
    w.conv("codex", "near-codex-session-cache", days_ago(now, 160, 10, 0), w.other("ledger-api"),
           "main", [
               U("the session cache in ledger-api grows without bound, entries never expire"),
               A("Sessions were stored without an expiry. I added a 24h TTL and a nightly "
                 "cleanup of orphaned keys."),
               U("ok")])
    w.conv("claude-code", "near-cc-fx-cache", days_ago(now, 100, 13, 0), repo, "feat/fx-rates", [
        U("cache the FX rates daily so pricing doesn't hit the exchange API on every checkout"),
        A("Added an FxRateCache with a 24 hour expiry keyed by currency pair, refreshed by a "
          "cron job at 06:00."),
        U("does the price cache need the same?"),
        A("No, PriceCache already has its own TTL.")])
    pm = month_range(t_ttl)
    c.append(Case("cc-cache-ttl",
                  "the thing last month with the cached prices going out of date almost "
                  "immediately", "Sam was the one who spotted it", "session",
                  "cue says 'going out of date' for expiring; month resolves relative to now; "
                  "other cache sessions nearby", "claude-code", "cc-cache-ttl", t_ttl, pm,
                  near=["near-cc-fx-cache", "near-codex-session-cache"]))
    c.append(Case("git-ttl",
                  "the commit that fixed the expiry units for the price cache",
                  "it was off by a factor of a thousand", "session",
                  "units (ms vs s) never named as such in the cue", "git", "git-ttl",
                  t_ttl + dt.timedelta(minutes=70), near=["near-cc-fx-cache", "git-fx-cache"]))
    w.commits.append(Commit(days_ago(now, 100, 14, 10), ME,
                            "feat(pricing): cache FX rates for 24h",
                            [("set", "src/tallyho/pricing/fx.py",
                              "class FxRateCache:\n    TTL = 24 * 3600\n")],
                            branch="feat/fx-rates", key="git-fx-cache"))

    # --- 3. migration lock timeout: line (claude) + commit (git) -------------------------
    t_mig = days_ago(now, 45, 11, 15)
    line_mig = ("Without a lock_timeout, CREATE INDEX waits behind the long-running report "
                "query for its lock, and every INSERT into orders queues up behind it, so the "
                "table looks frozen. With SET lock_timeout = '5s' the migration gives up and can "
                "be retried instead of blocking checkout.")
    w.conv("claude-code", "cc-migration-lock", t_mig, repo, "db/orders-created-index", [
        U("I need an index on orders.created_at for the reports page. Last time an index "
          "migration took the shop down for a few minutes, so be careful."),
        A("I'll write migrations/0042_orders_created_idx.sql with CREATE INDEX CONCURRENTLY."),
        U("why do we also need that lock timeout line you added?"),
        A(line_mig),
        U("makes sense, ship it"),
        T("Bash", {"command": "git commit -am 'db: index orders.created_at concurrently with a "
                              "lock timeout'"},
          "[db/orders-created-index @SHA:git-orders-index] db: index orders.created_at"),
        A("Committed.")])
    w.commits.append(Commit(t_mig + dt.timedelta(minutes=40), ME,
                            "db: index orders.created_at concurrently with a lock timeout",
                            [("set", "migrations/0042_orders_created_idx.sql",
                              "SET lock_timeout = '5s';\n"
                              "CREATE INDEX CONCURRENTLY IF NOT EXISTS orders_created_at_idx\n"
                              "    ON orders (created_at);\n")],
                            branch="db/orders-created-index", key="git-orders-index"))
    w.conv("codex", "near-codex-invoice-migration", days_ago(now, 75, 15, 0), repo,
           "db/invoice-backfill", [
               U("the invoice backfill migration takes forty minutes on the staging snapshot"),
               A("It updates all rows in one statement. I batched it into chunks of 5,000 and "
                 "added a statement_timeout so it cannot hold locks for long."),
               U("good")])
    w.conv("gemini", "near-gem-pg-locks", days_ago(now, 200, 20, 0), w.other("datalake"), None, [
        U("in postgres, which lock does ALTER TABLE ADD COLUMN take?"),
        A("ACCESS EXCLUSIVE, briefly; with a volatile default it rewrites the table and holds "
          "it much longer.")])
    c.append(Case("cc-migration-lock-line",
                  "where the assistant explained why the migration had to give up on waiting "
                  "for the table", "it was about the orders index and checkout freezing",
                  "line", "the target is one assistant turn; cue paraphrases lock_timeout",
                  "claude-code", "cc-migration-lock", t_mig, turn_contains="SET lock_timeout = '5s'",
                  near=["near-codex-invoice-migration", "near-gem-pg-locks"]))
    c.append(Case("git-orders-index",
                  "the change that stopped the database migration from locking up the orders "
                  "table", "it built the index without blocking writes", "session",
                  "CONCURRENTLY paraphrased; backfill migration is a near miss", "git",
                  "git-orders-index", t_mig + dt.timedelta(minutes=40),
                  near=["near-codex-invoice-migration", "cc-migration-lock"]))

    # --- 4. README install docs with Lena (claude) --------------------------------------
    t_docs = days_ago(now, 6, 15, 30)
    w.conv("claude-code", "cc-readme-lena", t_docs, repo, "docs/install", [
        U("Lena is rewriting the onboarding docs and asked for the install section of "
          "README.md to work on a fresh Mac. Can you redo it?"),
        T("Read", {"file_path": f"{repo}/README.md"},
          "## Install\n\n    pip install -r requirements.txt\n    make dev"),
        A("The section assumes a virtualenv already exists. I'd recommend pipx for the CLI and "
          "a venv for development, and list the Homebrew packages (redis, postgresql@16)."),
        U("Lena prefers uv over pipx, use that"),
        A("Rewrote the Install section around `uv venv` and `uv pip install -e .`, with the "
          "Homebrew prerequisites listed first."),
        U("thanks")])
    w.conv("codex", "near-codex-api-docs", days_ago(now, 58, 10, 0), repo, "docs/api", [
        U("regenerate docs/api.md from the OpenAPI spec, it misses the new endpoints"),
        A("Regenerated docs/api.md; it now documents /refunds and /webhooks/test.")])
    w.conv("claude-code", "near-cc-blog-install", days_ago(now, 4, 9, 0), w.other("blog"), "main", [
        U("write install instructions for the blog's static site generator"),
        A("Added an Install section to the README using pipx install mkdocs.")])
    c.append(Case("cc-readme-lena",
                  "the docs session with Lena about the setup instructions",
                  "we went with uv in the end, not pipx", "session",
                  "person named; 'setup instructions' for Install section; a recent blog "
                  "install session mentions pipx", "claude-code", "cc-readme-lena", t_docs,
                  near=["near-cc-blog-install", "near-codex-api-docs"]))

    # --- 5. duplicate webhooks (codex) ---------------------------------------------------
    t_wh = days_ago(now, 26, 10, 45)
    w.conv("codex", "cx-webhook-dupes", t_wh, repo, "fix/webhook-idempotency", [
        U("a shop got two invoice.paid emails and their order was marked paid twice. I think "
          "Stripe is delivering the same event more than once"),
        T("shell", {"command": ["rg", "-n", "construct_event", "src"]},
          "src/tallyho/payments/webhooks.py:5:    event = stripe.Webhook.construct_event("),
        A("Stripe retries deliveries and can send an event twice. handle_event processes every "
          "delivery, so I'll make it idempotent: record event.id in a processed_events table "
          "and skip ids we've seen."),
        U("yes do that, with a unique constraint"),
        T("apply_patch", {"path": "src/tallyho/payments/webhooks.py"}, "Success. Updated 1 file"),
        A("Added processed_events(event_id PRIMARY KEY) and an INSERT ... ON CONFLICT DO "
          "NOTHING guard before mark_paid; a duplicate delivery now returns 200 without side "
          "effects.")])
    w.conv("claude-code", "near-cc-refund-webhook", days_ago(now, 130, 14, 0), repo,
           "feat/refunds", [
               U("handle the charge.refunded webhook so refunds show up on the order"),
               A("Added a charge.refunded branch to handle_event that records the refund "
                 "amount on the order.")])
    w.conv("codex", "near-codex-double-email", days_ago(now, 12, 16, 0), w.other("shopfront"),
           "main", [
               U("customers get the order confirmation email twice"),
               A("The confirmation is sent from both the checkout handler and the queue "
                 "worker; I removed the direct send.")])
    c.append(Case("cx-webhook-dupes",
                  "the codex session where customers were being charged twice because the "
                  "payment notification arrived twice",
                  "we used the event id to ignore repeats", "session",
                  "'charged twice' is inexact (they were marked paid twice); double email and "
                  "refund webhook are near misses", "codex", "cx-webhook-dupes", t_wh,
                  near=["near-codex-double-email", "near-cc-refund-webhook"]))

    # --- 6. docker image size (codex, last spring) ---------------------------------------
    t_dk = recent(now, 4, 22, 13, 0, min_gap=60)
    w.conv("codex", "cx-docker-slim", t_dk, repo, "build/slim-image", [
        U("our docker image is 1.2 GB, deploys take forever. can we make it smaller?"),
        A("The Dockerfile builds on python:3.12 and copies the whole repo including tests and "
          ".git. A multi-stage build that compiles wheels in a builder stage and copies only "
          "the installed packages into a slim runtime will help."),
        U("try alpine for the final stage"),
        T("shell", {"command": ["docker", "build", "-t", "tallyho:alpine", "."]},
          "ERROR: psycopg wheel not available for musl; building from source failed"),
        A("Alpine uses musl, so the binary wheels don't install. I used python:3.12-slim "
          "instead; the image is now 182 MB."),
        U("good enough"),
        T("shell", {"command": ["git", "commit", "-am", "build: multi-stage slim image"]},
          "[build/slim-image @SHA:git-docker] build: multi-stage slim image")])
    w.commits.append(Commit(t_dk + dt.timedelta(minutes=45), ME,
                            "build: multi-stage slim image (1.2 GB -> 182 MB)",
                            [("set", "Dockerfile",
                              "FROM python:3.12 AS build\nWORKDIR /src\nCOPY requirements.txt .\n"
                              "RUN pip wheel -r requirements.txt -w /wheels\n\n"
                              "FROM python:3.12-slim\nCOPY --from=build /wheels /wheels\n"
                              "RUN pip install /wheels/*\nCOPY src/ /app/src/\n"
                              "CMD [\"gunicorn\", \"tallyho.app:app\"]\n")],
                            branch="build/slim-image", key="git-docker"))
    w.conv("claude-code", "near-cc-k8s-oom", days_ago(now, 30, 10, 0), repo, "deploy/limits", [
        U("the web pods get OOMKilled under load after the last deploy"),
        A("The container memory limit is 256Mi; gunicorn with 4 workers needs more. I raised "
          "it to 512Mi in deploy/k8s/web.yaml.")])
    w.conv("codex", "near-codex-docker-cache", recent(now, 8, 5, 10, 0, min_gap=30),
           w.other("infra-scripts"), "main", [
               U("docker builds in CI don't use the layer cache"),
               A("The COPY . . comes before pip install, so any change invalidates the "
                 "dependency layer; I moved requirements first.")])
    c.append(Case("cx-docker-slim", "last spring when we got the container image way smaller",
                  "alpine didn't work out so we used a different base", "session",
                  "season resolves relative to now; other docker/deploy sessions",
                  "codex", "cx-docker-slim", t_dk, season_range(t_dk, (3, 5)),
                  near=["near-codex-docker-cache", "near-cc-k8s-oom"]))

    # --- 7. settings page strings (codex, file named, topic) -----------------------------
    t_i18n = days_ago(now, 64, 9, 20)
    w.conv("codex", "cx-settings-strings", t_i18n, repo, "feat/i18n-settings", [
        U("first, what's the state of the CI on main?"),
        T("shell", {"command": ["gh", "run", "list", "-L", "3"]}, "completed success ci main"),
        A("The last three runs on main are green."),
        U("ok. next: SettingsPanel.tsx has all its labels hard-coded in English. pull them "
          "into the locale catalog so Priya's translators can work on them"),
        T("shell", {"command": ["rg", "-n", ">[A-Z][a-z]", "web/src/SettingsPanel.tsx"]},
          "4:      <h2>Account settings</h2>\n5:      <label>Display name</label>"),
        A("I replaced the literals in SettingsPanel.tsx with t('settings.title'), "
          "t('settings.displayName') and t('settings.save'), and added the keys to "
          "web/locales/en/messages.json with empty entries in de and fr."),
        U("and the date format on that page?"),
        A("It now uses Intl.DateTimeFormat with the active locale.")])
    w.conv("claude-code", "near-cc-navbar-i18n", days_ago(now, 150, 11, 0), repo, "feat/i18n", [
        U("set up i18n for the web app, start with the Navbar"),
        A("Added react-i18next with an English catalog and translated the Navbar labels.")])
    w.conv("codex", "near-codex-settings-darkmode", days_ago(now, 40, 15, 0), repo, "ui/dark-mode",
           [U("the settings page is unreadable in dark mode"),
            A("SettingsPanel.tsx used hard-coded colours; I switched it to the theme tokens.")])
    c.append(Case("cx-settings-strings",
                  "when we moved the hard-coded English text out of SettingsPanel",
                  "it was for Priya's translators", "topic",
                  "the session starts on something else (CI status); file name given; the "
                  "dark-mode session touched the same file", "codex", "cx-settings-strings",
                  t_i18n, turn_contains="locale catalog",
                  near=["near-codex-settings-darkmode", "near-cc-navbar-i18n"]))

    # --- 8. N+1 queries in admin order list (codex, line) --------------------------------
    t_np = days_ago(now, 85, 14, 0)
    line_np = ("The admin order list runs one query per row: o.customer.name triggers a lazy "
               "load for each of the 200 orders, so 201 queries per page. Adding "
               "select_related('customer') brings it to a single join.")
    w.conv("codex", "cx-n-plus-one", t_np, repo, "perf/admin-orders", [
        U("the admin orders page takes 6 seconds to load for big shops"),
        T("shell", {"command": ["python", "-m", "tallyho.tools.querycount", "/admin/orders"]},
          "201 queries in 5.8s"),
        A(line_np),
        U("do it"),
        A("Done; the page now runs 1 query and loads in 140 ms.")])
    w.conv("claude-code", "near-cc-report-slow", days_ago(now, 90, 10, 0), repo,
           "perf/reports", [
               U("the monthly report takes twelve seconds"),
               A("The report builder sums invoice lines in Python; I moved the aggregation "
                 "into SQL with GROUP BY and it now takes 0.8 s.")])
    w.conv("gemini", "near-gem-orm-n1", days_ago(now, 210, 19, 0), w.other("datalake"), None, [
        U("what is the N+1 query problem?"),
        A("Loading a list and then lazily loading a relation for each item, producing N extra "
          "queries; eager loading fixes it.")])
    c.append(Case("cx-n-plus-one-line",
                  "the bit where it explained why the admin page fired hundreds of database "
                  "calls", "the fix was select_related on the customer", "line",
                  "one assistant line; a general N+1 explanation and another slow page nearby",
                  "codex", "cx-n-plus-one", t_np, turn_contains="select_related('customer')",
                  near=["near-cc-report-slow", "near-gem-orm-n1"]))

    # --- 9. gemini: log timestamp regex (concept) ----------------------------------------
    t_rx = days_ago(now, 140, 21, 10)
    w.conv("gemini", "gm-log-regex", t_rx, w.other("infra-scripts"), None, [
        U("I need a regex that matches the timestamps in our nginx access logs when they are "
          "ISO-8601, e.g. 2026-03-02T10:15:30.123+01:00"),
        A("Use ^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}(?:\\.\\d{1,6})?(?:Z|[+-]\\d{2}:\\d{2})"
          " . The (?:\\.\\d{1,6})? group makes the fractional seconds optional, which is "
          "where most patterns go wrong."),
        U("and with python?"),
        A("datetime.fromisoformat handles the optional fraction and the offset since 3.11, so "
          "you can match loosely and let it validate.")], title="Regex for ISO timestamps")
    w.conv("claude-code", "near-cc-log-rotation", days_ago(now, 145, 10, 0),
           w.other("infra-scripts"), "main", [
               U("nginx logs fill the disk, set up rotation"),
               A("Added a logrotate config: daily, keep 14, compress, postrotate reload nginx.")])
    w.conv("gemini", "near-gem-date-format", days_ago(now, 300, 20, 0), w.other("mobile-app"),
           None, [U("how do I format a date as 2 March 2026 in Swift?"),
                  A("Use DateFormatter with dateStyle .long and the user's locale.")])
    c.append(Case("gm-log-regex", "when I asked how to pull the dates out of the web server logs",
                  "the tricky part was the optional milliseconds", "concept",
                  "'dates' for ISO-8601 timestamps, 'web server' for nginx; log rotation and "
                  "date formatting near misses", "gemini", "gm-log-regex", t_rx,
                  near=["near-cc-log-rotation", "near-gem-date-format"]))

    # --- 10. gemini: annual plan price (summer, Priya) -----------------------------------
    t_pr = recent(now, 7, 16, 17, 30, min_gap=30)
    w.conv("gemini", "gm-annual-price", t_pr, repo, None, [
        U("Priya wants an annual plan. Monthly is 29 EUR. If we give two months free, what do "
          "we charge for twelve months and what's the effective discount?"),
        A("10 x 29 = 290 EUR a year, a 16.7% discount against 348 EUR."),
        U("she wants it to end in 9, something like 289 or 299"),
        A("289 EUR is 17.0% off; 299 EUR is 14.1% off. 289 keeps the 'two months free' promise.")],
        title="Annual plan pricing", extra_fmt="json")
    w.conv("codex", "near-codex-coupon-stacking", recent(now, 8, 2, 11, 0, min_gap=30), repo,
           "fix/coupons", [U("coupon stacking applies the discount twice"),
                           A("Coupons are now applied in a fixed order and only once each.")])
    w.conv("opencortex", "near-oc-pricing-page", recent(now, 6, 20, 9, 0, min_gap=30), "", None, [
        U("draft copy for the pricing page: monthly and annual plans"),
        A("Here's a draft with Starter, Shop and Pro tiers, billed monthly or yearly.")])
    c.append(Case("gm-annual-price", "the chat in the summer about what the yearly price "
                  "should be", "Priya wanted a number ending in nine", "session",
                  "season + person; coupon and pricing-page sessions nearby", "gemini",
                  "gm-annual-price", t_pr, season_range(t_pr, (6, 8)),
                  near=["near-oc-pricing-page", "near-codex-coupon-stacking"]))

    # --- 11. gemini: OAuth PKCE (concept) -------------------------------------------------
    t_pk = days_ago(now, 52, 20, 45)
    w.conv("gemini", "gm-pkce", t_pk, w.other("mobile-app"), None, [
        U("explain the code_verifier and code_challenge in the OAuth authorization code flow, "
          "we're adding login to the iOS app"),
        A("PKCE: the app makes a random code_verifier, sends its SHA-256 as the "
          "code_challenge with the authorization request, and later proves possession by "
          "sending the verifier with the token request. An intercepted code is useless "
          "without the verifier, which is why public clients like mobile apps need it.")])
    w.conv("claude-code", "near-cc-refresh-token", days_ago(now, 45, 10, 0), repo,
           "auth/refresh-rotation", [
               U("rotate the refresh token on every use"),
               A("Refresh tokens are now single-use; reuse of an old one revokes the family.")])
    w.conv("gemini", "near-gem-jwt", days_ago(now, 240, 20, 0), w.other("ledger-api"), None, [
        U("what's the difference between a JWT access token and an opaque token?"),
        A("A JWT is self-contained and verified locally; an opaque token needs introspection.")])
    c.append(Case("gm-pkce", "when I asked how that verifier/challenge thing in OAuth works",
                  "it was for the phone app login", "concept",
                  "concept explanation; other auth token chats", "gemini", "gm-pkce", t_pk,
                  near=["near-gem-jwt", "near-cc-refresh-token"]))

    # --- 12. aider: CSV export; 13. aider: rename UserAccount -> Member -------------------
    shop = w.aider_dir(REPO_NAME + "-reports")
    t_csv = days_ago(now, 70, 10, 5)
    w.conv("aider", "ad-csv-export", t_csv, shop, None, [
        U("add an export_csv function to reports.py that writes the monthly report rows"),
        A("reports.py\n```python\n<<<<<<< SEARCH\n=======\ndef export_csv(rows, path):\n"
          "    with open(path, 'w', newline='') as f:\n        csv.writer(f).writerows(rows)\n"
          ">>>>>>> REPLACE\n```"),
        T("aider", {}, "Applied edit to reports.py"),
        U("customer names with commas break the columns in excel"),
        A("csv.writer already quotes fields containing commas; the file was opened without "
          "newline='' on Windows. I also set quoting=csv.QUOTE_MINIMAL explicitly and added "
          "a BOM so Excel detects UTF-8.")])
    w.conv("aider", "near-ad-pdf-invoice", days_ago(now, 180, 15, 0), shop, None, [
        U("generate the invoice as a PDF"),
        A("Added render_invoice_pdf using reportlab."), T("aider", {}, "Applied edit to invoice.py")])
    w.conv("claude-code", "near-cc-json-export", days_ago(now, 66, 11, 0), repo, "feat/export", [
        U("add a JSON export endpoint for orders"),
        A("Added GET /orders/export.json streaming the orders as JSON lines.")])
    c.append(Case("ad-csv-export", "the spreadsheet download for the reports",
                  "punctuation in some people's names shifted the columns", "session",
                  "'spreadsheet download' for CSV export; JSON export and PDF invoice nearby",
                  "aider", "ad-csv-export", t_csv,
                  near=["near-cc-json-export", "near-ad-pdf-invoice"]))
    club = w.aider_dir("club-site")
    t_ren = recent(now, 3, 10, 16, 0, min_gap=60)
    w.conv("aider", "near-ad-club-form", t_ren - dt.timedelta(days=20), club, None, [
        U("add a signup form for new members"),
        A("Added SignupForm with name and email fields."), T("aider", {}, "Applied edit to forms.py")])
    w.conv("aider", "ad-rename-member", t_ren, club, None, [
        U("rename the UserAccount model to Member everywhere"),
        A("models.py\n```python\n<<<<<<< SEARCH\nclass UserAccount(Base):\n=======\n"
          "class Member(Base):\n>>>>>>> REPLACE\n```"),
        T("aider", {}, "Applied edit to models.py\nApplied edit to views.py"),
        U("the tests still load user_account fixtures"),
        A("Renamed fixtures/user_account.json to fixtures/member.json and updated conftest.py.")])
    w.conv("aider", "near-ad-club-email", t_ren + dt.timedelta(days=9), club, None, [
        U("send members a reminder email before their subscription renews"),
        A("Added a renewal reminder job that emails members 7 days before renewal.")])
    c.append(Case("ad-rename-member", "back in March when we renamed the account class",
                  "the test fixtures needed renaming too", "session",
                  "month resolves relative to now; two other launches in the same history file "
                  "mention members", "aider", "ad-rename-member", t_ren, month_range(t_ren),
                  near=["near-ad-club-form", "near-ad-club-email"]))

    # --- 14. opencortex: Lisbon offsite; 15. replication chapter --------------------------
    t_lx = recent(now, 9, 14, 9, 30, min_gap=30)
    w.conv("opencortex", "oc-lisbon-offsite", t_lx, "", None, [
        U("help me plan the team offsite in Lisbon, three days in October, eight people"),
        A("Day 1: arrivals and a walking tour; day 2: roadmap and a retro; day 3: hack day "
          "and dinner in Alfama."),
        U("move the retro to the second day's morning, Sam can't do afternoons"),
        A("Updated: the retro is now day 2, 9:30-11:00, roadmap after lunch.")])
    w.conv("opencortex", "near-oc-berlin-conf", recent(now, 5, 3, 9, 0, min_gap=30), "", None, [
        U("what should I pack for the Berlin conference trip?"),
        A("A light jacket, adapters, and printed tickets for the venue.")])
    w.conv("opencortex", "near-oc-retro-format", days_ago(now, 25, 16, 0), "", None, [
        U("suggest a retro format for a team of eight"),
        A("Try 'start, stop, continue' with silent writing first, then dot voting.")])
    c.append(Case("oc-lisbon-offsite", "the conversation in September about the team trip "
                  "to Portugal", "the retrospective ended up on day two", "session",
                  "'Portugal' for Lisbon; another trip and a retro conversation nearby",
                  "opencortex", "oc-lisbon-offsite", t_lx, month_range(t_lx),
                  near=["near-oc-berlin-conf", "near-oc-retro-format"]))
    t_rep = days_ago(now, 11, 21, 0)
    w.conv("opencortex", "oc-replication-chapter", t_rep, "", None, [
        U("summarise the chapter on replication from Designing Data-Intensive Applications"),
        A("Leader-based replication sends writes to one leader that streams them to followers. "
          "Asynchronous followers can lag, so a read from a follower may miss your own recent "
          "write (read-after-write consistency) or go back in time (monotonic reads)."),
        U("what did it say about the lag problems?"),
        A("Replication lag causes the anomalies above; fixes are reading your own writes from "
          "the leader, sticky routing per user, and consistent prefix reads.")])
    w.conv("opencortex", "near-oc-partitioning", days_ago(now, 3, 21, 0), "", None, [
        U("summarise the chapter on partitioning from the same book"),
        A("Partitioning by key range or hash; rebalancing; secondary indexes by document or "
          "by term.")])
    w.conv("gemini", "near-gem-raft", days_ago(now, 14, 22, 0), w.other("datalake"), None, [
        U("how does raft elect a leader?"),
        A("Followers time out, become candidates, and win with votes from a majority.")])
    c.append(Case("oc-replication-chapter",
                  "the chat where you summarised that chapter on copying data between "
                  "database servers", "something about followers falling behind", "concept",
                  "'copying data between servers' for replication; partitioning summary of the "
                  "same book and a raft chat nearby", "opencortex", "oc-replication-chapter",
                  t_rep, near=["near-oc-partitioning", "near-gem-raft"]))

    # --- 16. git: requests bump (March); 17. git: CI pip cache ---------------------------
    t_req = recent(now, 3, 12, 11, 20, min_gap=60)
    w.commits.append(Commit(t_req, PEOPLE["sam"],
                            "deps: bump requests 2.31.0 -> 2.32.3 (CVE-2024-35195)\n\n"
                            "Session verify=False leaked to later requests on the same "
                            "connection pool.",
                            [("replace", "requirements.txt", "requests==2.31.0",
                              "requests==2.32.3"),
                             ("replace", "requirements.lock", "requests==2.31.0",
                              "requests==2.32.3")], branch="deps/requests-2.32", key="git-requests"))
    w.commits.append(Commit(t_req - dt.timedelta(days=15), PEOPLE["sam"],
                            "deps: bump redis client 5.0.1 -> 5.0.3",
                            [("replace", "requirements.txt", "redis==5.0.1", "redis==5.0.3")],
                            key="git-redis-bump"))
    w.commits.append(Commit(t_req + dt.timedelta(days=20), PEOPLE["sam"],
                            "deps: bump stripe 8.4.0 -> 9.1.0 (security advisory for webhooks)",
                            [("replace", "requirements.txt", "stripe==8.4.0", "stripe==9.1.0")],
                            key="git-stripe-bump"))
    c.append(Case("git-requests", "back in March when Sam upgraded the HTTP library because "
                  "of the security advisory", "it was about certificate checking leaking "
                  "between calls", "session", "library named by role, not name; other "
                  "dependency bumps by the same person around then", "git", "git-requests",
                  t_req, month_range(t_req), near=["git-redis-bump", "git-stripe-bump"]))
    t_ci = days_ago(now, 33, 17, 45)
    w.commits.append(Commit(t_ci, PEOPLE["priya"],
                            "ci: cache pip downloads keyed on requirements.lock\n\n"
                            "Cuts the install step from ~3 min to ~25 s.",
                            [("replace", ".github/workflows/ci.yml",
                              "      - run: pip install -r requirements.txt\n",
                              "      - uses: actions/cache@v4\n        with:\n"
                              "          path: ~/.cache/pip\n"
                              "          key: pip-${{ hashFiles('requirements.lock') }}\n"
                              "      - run: pip install -r requirements.txt\n")],
                            branch="ci/pip-cache", key="git-ci-cache"))
    w.commits.append(Commit(t_ci - dt.timedelta(days=6), PEOPLE["priya"],
                            "ci: split slow integration tests into their own job",
                            [("append", ".github/workflows/ci.yml",
                              "  integration:\n    runs-on: ubuntu-latest\n"
                              "    steps:\n      - run: pytest -m integration\n")],
                            key="git-ci-split"))
    w.conv("codex", "near-codex-ci-timeout", t_ci + dt.timedelta(days=4, hours=-3), repo,
           "ci/macos-timeout", [U("the macOS matrix build times out in CI"),
                                A("I raised the timeout and cached Homebrew downloads.")])
    c.append(Case("git-ci-cache", "the commit that made CI installs faster",
                  "it keyed the cache on the lockfile", "session",
                  "'installs faster' for caching pip; other CI speed-ups by Priya around "
                  "the same week", "git", "git-ci-cache", t_ci,
                  near=["git-ci-split", "near-codex-ci-timeout"]))

    # --- notes --------------------------------------------------------------------------
    t_q = days_ago(now, 95, 10, 0)
    w.notes += [
        Note("nt-queue-decision", "notes/decisions.org",
             "Job queue: SQLite in WAL mode, not Postgres",
             "We need a durable queue for webhook retries and report jobs.\n"
             "- Postgres SKIP LOCKED would work but adds a server to every dev setup.\n"
             "- SQLite with WAL handles our ~50 jobs/s with one writer.\n"
             "Decision: the embedded option; revisit if we pass 500 jobs/s.", t_q, "DONE",
             ["decision"]),
        Note("near-nt-cache-decision", "notes/decisions.org",
             "Cache backend: Redis over Memcached",
             "Redis gives us TTLs per key and persistence for the rate limiter.",
             days_ago(now, 210), "DONE", ["decision"]),
        Note("near-nt-queue-bench", "notes/ideas.org", "Benchmark Postgres queue throughput",
             "Try SKIP LOCKED with 8 workers and see where it tops out.", days_ago(now, 60)),
    ]
    c.append(Case("nt-queue-decision", "that decision note about which database we'd use for "
                  "background jobs", "we picked the embedded one", "topic",
                  "'embedded' for SQLite; a cache-backend decision and a Postgres queue "
                  "idea nearby", "notes", "nt-queue-decision", t_q,
                  near=["near-nt-cache-decision", "near-nt-queue-bench"]))
    t_s = recent(now, 10, 6, 15, 0, min_gap=20)
    w.notes += [
        Note("nt-sam-1on1", "journal.org", "One-on-one with Sam",
             "- He wants to move to the platform team in Q1.\n- Handover plan for the pricing "
             "cache work.\n- Asked for more review time on Fridays.", t_s, journal=True),
        Note("near-nt-sam-sync", "journal.org", "Sam sync",
             "- Pricing cache follow-ups.\n- Vacation in December.",
             t_s - dt.timedelta(days=14), journal=True),
        Note("near-nt-priya-1on1", "journal.org", "1:1 with Priya",
             "- Wants to lead the translations work.\n- Thinking about the platform team.",
             t_s + dt.timedelta(days=2), journal=True),
    ]
    c.append(Case("nt-sam-1on1", "what Sam and I talked about in our one-on-one in early "
                  "October", "it was about him switching teams", "topic",
                  "journal datetree entry; other 1:1s around the same date, one also "
                  "mentioning the platform team", "notes", "nt-sam-1on1", t_s,
                  (t_s.replace(day=1, hour=0), t_s.replace(day=12, hour=23)),
                  near=["near-nt-sam-sync", "near-nt-priya-1on1"]))
    t_key = days_ago(now, 120, 11, 0)
    w.notes += [
        Note("nt-deploy-key", "notes/howto.org", "Rotating the deploy SSH key",
             "1. ssh-keygen -t ed25519 -f deploy_2026 -C deploy@tallyho\n"
             "2. Add the public key to the servers' authorized_keys.\n"
             "3. Update the DEPLOY_SSH_KEY secret in the GitHub repository settings.\n"
             "4. Run a deploy, then remove the old key.", t_key),
        Note("near-nt-gpg", "notes/howto.org", "Renewing my GPG signing key",
             "gpg --edit-key, expire, save; upload to the keyserver.", days_ago(now, 250)),
        Note("near-nt-tls", "notes/howto.org", "Renewing the TLS certificate by hand",
             "certbot renew --cert-name shop.tallyho.dev, then reload nginx.", days_ago(now, 30)),
    ]
    c.append(Case("nt-deploy-key", "my notes on how to change the key we deploy with",
                  "there was a step about updating the secret in CI", "topic",
                  "'change' for rotate; other key/cert renewal how-tos", "notes",
                  "nt-deploy-key", t_key, near=["near-nt-gpg", "near-nt-tls"]))
    t_bp = days_ago(now, 55, 22, 0)
    w.notes += [
        Note("nt-backpressure", "notes/ideas.org", "Backpressure for the ingest pipeline",
             "When the queue is above 80% full, producers should slow down instead of the "
             "queue dropping events. A token bucket per producer, refilled by the consumer's "
             "ack rate, would do it.", t_bp, tags=["idea"]),
        Note("near-nt-retry-policy", "notes/ideas.org", "Retry policy for webhooks",
             "Exponential backoff with jitter, give up after 24 h.", days_ago(now, 80),
             tags=["idea"]),
        Note("near-nt-rate-limit", "notes/ideas.org", "Rate limiting the public API",
             "Token bucket per API key: 100 requests burst, 10/s refill.", days_ago(now, 20),
             tags=["idea"]),
    ]
    c.append(Case("nt-backpressure", "the idea I wrote down about slowing the producers down "
                  "when the queue fills up", "each producer got its own refilling allowance", "concept",
                  "the rate-limit idea also uses a token bucket; retry policy is queue-adjacent",
                  "notes", "nt-backpressure", t_bp,
                  near=["near-nt-rate-limit", "near-nt-retry-policy"]))


# ---------------------------------------------------------------------------------------
# distractors


def add_distractors(w: World, n: int, sessions: int | None, commits: int | None) -> None:
    rng, now = w.rng, w.now
    topics = list(TOPICS)
    cwds = [w.repo] * 3 + [w.other(r) for r in OTHER_REPOS]

    def when() -> dt.datetime:
        d = rng.randint(1, 364)
        return days_ago(now, d, rng.randint(8, 19), rng.randint(0, 59))

    def branch(topic: str) -> str:
        return rng.choice(["main", "main", f"{rng.choice(['fix', 'feat', 'chore'])}/"
                           f"{TOPICS[topic]['area'][0]}-{rng.randint(100, 999)}"])

    n_sess = sessions if sessions is not None else max(4, n * 4 // 10)
    n_comm = commits if commits is not None else max(3, n * 2 // 10)
    n_gem = max(2, n // 10)
    n_aid = max(1, n // 20)
    n_oc = max(2, n // 10)
    n_notes = max(3, n * 15 // 100)
    for i in range(n_sess):
        topic = rng.choice(topics)
        cwd = rng.choice(cwds)
        src = "claude-code" if i % 2 == 0 else "codex"
        turns = random_turns(rng, topic, rng.choice((2, 2, 3, 3, 3, 4, 4, 5)), cwd)
        w.conv(src, f"dist-{src}-{i}", when(), cwd, branch(topic), turns)
    for i in range(n_gem):
        topic = rng.choice(topics)
        turns = [t for t in random_turns(rng, topic, rng.randint(1, 3), "") if t[0] != "tool"]
        w.conv("gemini", f"dist-gemini-{i}", when(), rng.choice(cwds), None, turns,
               extra_fmt=rng.choice(["json", "jsonl"]))
    for i in range(n_aid):
        topic = rng.choice(topics)
        turns = [t for t in random_turns(rng, topic, rng.randint(1, 3), "") if t[0] != "tool"]
        d = w.aider_dir(rng.choice([REPO_NAME + "-reports", "club-site"]))
        w.conv("aider", f"dist-aider-{i}", when(), d, None, turns)
    for i in range(n_oc):
        topic = rng.choice(topics)
        turns = [t for t in random_turns(rng, topic, rng.randint(1, 3), "") if t[0] != "tool"]
        w.conv("opencortex", f"dist-oc-{i}", when(), "", None, turns)
    types = ["fix", "feat", "refactor", "test", "docs", "chore", "perf", "ci"]
    for i in range(n_comm):
        topic = rng.choice(topics)
        m = _mix(rng, topic)
        msg = f"{rng.choice(types)}({m['area']}): {m['fixes']}"
        if rng.random() < 0.5:
            msg += f"\n\nThe {m['nouns']} {m['problems']}."
        path = f"src/tallyho/{m['area']}/{rng.choice(FN_WORDS)}_{rng.randint(0, 9)}.py"
        fn = f"def {rng.choice(FN_WORDS)}_{m['nouns'].split()[0].lower().strip('.')}_{i}():\n" \
             f"    # {m['fixes']}\n    return {rng.randint(0, 999)}\n"
        w.commits.append(Commit(when(), rng.choice(list(PEOPLE.values())), msg,
                                [("append", path, fn)]))
    headings = ["Thoughts on the {nouns}", "How we {fixes}", "Why the {nouns} {problems}",
                "Checklist: {fixes}", "Meeting notes: {nouns}"]
    for i in range(n_notes):
        topic = rng.choice(topics)
        m = _mix(rng, topic)
        title = rng.choice(headings).format(**m)
        title = title[0].upper() + title[1:] + ("" if i < 40 else f" ({i})")
        journal = rng.random() < 0.3
        w.notes.append(Note(f"dist-note-{i}", "journal.org" if journal
                            else f"notes/{topic}.org", title,
                            _fmt(rng, A_TEXT, m) + "\n" + _fmt(rng, A_TEXT, m), when(),
                            rng.choice([None, None, "TODO", "DONE"]), journal=journal))


# ---------------------------------------------------------------------------------------
# git via fast-import


def build_repo(w: World) -> dict[str, str]:
    """Create the repository; returns story key -> full sha."""
    repo = Path(w.repo)
    repo.mkdir(parents=True)
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True, env=env)
    files = dict(BASE_FILES)
    first = min(c.when for c in w.commits) - dt.timedelta(days=3)
    commits = [Commit(first, ME, "Initial import of tallyho", [("set", p, t)
                                                                for p, t in files.items()])]
    files = {}
    commits += sorted(w.commits, key=lambda c: c.when)
    out: list[bytes] = []
    branches: list[tuple[str, int]] = []
    keyed: dict[int, str] = {}
    for mark, c in enumerate(commits, 1):
        touched: dict[str, str] = {}
        for e in c.edits:
            kind, path = e[0], e[1]
            cur = files.get(path, "")
            if kind == "set":
                new = e[2]
            elif kind == "append":
                new = cur + ("\n" if cur else "") + e[2]
                if new.count("\n") > 150:  # keep files small: drop the oldest function
                    new = new[new.index("\ndef ", 1) + 1:] if "\ndef " in new[1:] else e[2]
            else:
                if e[2] not in cur:
                    raise ValueError(f"story edit does not apply to {path}: {e[2]!r}")
                new = cur.replace(e[2], e[3], 1)
            files[path] = touched[path] = new
        epoch = int(c.when.timestamp())
        msg = c.message.encode() + b"\n"
        ident = f"{c.author[0]} <{c.author[1]}> {epoch} +0000".encode()
        out += [b"commit refs/heads/main\nmark :%d\nauthor %s\ncommitter %s\ndata %d\n"
                % (mark, ident, ident, len(msg)), msg]
        for path, text in touched.items():
            data = text.encode()
            out.append(b"M 100644 inline %s\ndata %d\n%s\n" % (path.encode(), len(data), data))
        out.append(b"\n")
        if c.branch:
            branches.append((c.branch, mark))
        if c.key:
            keyed[mark] = c.key
    for name, mark in branches:
        out.append(b"reset refs/heads/%s\nfrom :%d\n\n" % (name.encode(), mark))
    marks = repo / ".git" / "fixture-marks"
    subprocess.run(["git", "-C", str(repo), "fast-import", "--quiet",
                    f"--export-marks={marks}"], input=b"".join(out), check=True, env=env)
    shas: dict[int, str] = {}
    for line in marks.read_text().splitlines():
        m, sha = line.split()
        shas[int(m[1:])] = sha
    marks.unlink()
    subprocess.run(["git", "-C", str(repo), "reset", "-q", "--hard", "main"], check=True, env=env)
    w.timeline = sorted((c.when, shas[i]) for i, c in enumerate(commits, 1))
    return {key: shas[m] for m, key in keyed.items()}


# ---------------------------------------------------------------------------------------
# writers, one per format


def _sub_shas(text: str, shas: dict[str, str]) -> str:
    return re.sub(r"@SHA:([\w-]+)", lambda m: shas.get(m.group(1), "0" * 40)[:7], text)


def _times(c: Conv, rng: random.Random) -> list[dt.datetime]:
    t, out = c.start, []
    for _ in c.turns:
        out.append(t)
        t += dt.timedelta(seconds=rng.randint(c.step // 4, c.step * 2),
                          milliseconds=rng.randint(0, 999))
    return out


def _slug(cwd: str) -> str:
    return re.sub(r"[^A-Za-z0-9]", "-", cwd)


def write_claude(root: Path, c: Conv, rng: random.Random, shas: dict[str, str],
                 broken: bool = False) -> Path:
    d = root / "projects" / _slug(c.cwd)
    d.mkdir(parents=True, exist_ok=True)
    path = d / f"{c.sid}.jsonl"
    times = _times(c, rng)
    base = {"sessionId": c.sid, "cwd": c.cwd, "gitBranch": c.branch or "", "version": "2.0.14",
            "isSidechain": False}
    lines: list[dict[str, Any]] = []
    parent: str | None = None

    def add(obj: dict[str, Any], t: dt.datetime) -> dict[str, Any]:
        nonlocal parent
        u = _uuid(rng)
        full = {"parentUuid": parent, **base, **obj, "uuid": u, "timestamp": _iso(t)}
        parent = u
        lines.append(full)
        return full

    if rng.random() < 0.3:
        add({"type": "user", "message": {"role": "user", "content":
             "<command-name>/clear</command-name>\n<command-message>clear</command-message>\n"
             "<command-args></command-args>"}}, times[0] - dt.timedelta(seconds=5))
        add({"type": "user", "isMeta": True, "message": {"role": "user", "content":
             "Caveat: The messages below were generated by the user while running local "
             "commands. DO NOT respond to these messages unless explicitly asked."}},
            times[0] - dt.timedelta(seconds=4))
    msg_id = req = None
    for n, ((kind, payload), t) in enumerate(zip(c.turns, times, strict=True)):
        if n and kind == "person" and rng.random() < 0.1:
            lines.append({"type": "file-history-snapshot", "messageId": _uuid(rng),
                          "snapshot": {"trackedFileBackups": {}, "timestamp": _iso(t)},
                          "isSnapshotUpdate": False})
        if kind == "person":
            text = _sub_shas(payload, shas)
            content: Any = text if rng.random() < 0.6 else [{"type": "text", "text": text}]
            add({"type": "user", "message": {"role": "user", "content": content}}, t)
            msg_id = None
        elif kind == "assistant":
            msg_id, req = f"msg_{rng.getrandbits(64):016x}", f"req_{rng.getrandbits(64):016x}"
            if rng.random() < 0.2:  # a thinking block streamed first, under the same id
                add({"type": "assistant", "requestId": req,
                     "message": {"id": msg_id, "type": "message", "role": "assistant",
                                 "model": "claude-sonnet-4-5", "content": [
                                     {"type": "thinking", "thinking": "Let me check the code "
                                      "before answering.", "signature": "EqQB" + "A" * 24}]}},
                    t - dt.timedelta(seconds=1))
            block = {"type": "text", "text": _sub_shas(payload, shas)}
            obj = {"type": "assistant", "requestId": req,
                   "message": {"id": msg_id, "type": "message", "role": "assistant",
                               "model": "claude-sonnet-4-5", "content": [block],
                               "stop_reason": None, "usage": {"input_tokens": rng.randint(
                                   100, 9000), "output_tokens": rng.randint(10, 900)}}}
            add(obj, t)
            if rng.random() < 0.15:  # a streamed chunk repeated
                add(json.loads(json.dumps(obj)), t)
            msg_id = None
        else:
            tool: Tool = payload
            if msg_id is None:
                msg_id, req = f"msg_{rng.getrandbits(64):016x}", f"req_{rng.getrandbits(64):016x}"
            tid = f"toolu_{rng.getrandbits(80):020x}"
            add({"type": "assistant", "requestId": req,
                 "message": {"id": msg_id, "type": "message", "role": "assistant",
                             "model": "claude-sonnet-4-5",
                             "content": [{"type": "tool_use", "id": tid, "name": tool.name,
                                          "input": tool.args}]}}, t)
            add({"type": "user", "toolUseResult": {"stdout": "", "stderr": ""},
                 "message": {"role": "user", "content": [
                     {"type": "tool_result", "tool_use_id": tid,
                      "content": _sub_shas(tool.output, shas), "is_error": tool.error}]}},
                t + dt.timedelta(seconds=2))
    if rng.random() < 0.3:
        first = next((p for k, p in c.turns if k == "person"), "Session")
        lines.insert(0, {"type": "summary", "summary": c.title or first.splitlines()[0][:70],
                         "leafUuid": lines[-1]["uuid"]})
    text = "".join(json.dumps(o, ensure_ascii=False) + "\n" for o in lines)
    if broken:  # a crash mid-write: the last line is cut short
        text += json.dumps({"type": "assistant", **base})[:60]
    path.write_text(text)
    return path


def write_codex(root: Path, c: Conv, rng: random.Random, shas: dict[str, str],
                head_at: Any) -> Path:
    s = c.start
    d = root / "sessions" / f"{s:%Y}" / f"{s:%m}" / f"{s:%d}"
    d.mkdir(parents=True, exist_ok=True)
    path = d / f"rollout-{s:%Y-%m-%dT%H-%M-%S}-{c.sid}.jsonl"
    times = _times(c, rng)
    lines: list[str] = []

    def add(t: dt.datetime, kind: str, payload: dict[str, Any]) -> None:
        lines.append(json.dumps({"timestamp": _iso(t), "type": kind, "payload": payload},
                                ensure_ascii=False))

    git: dict[str, Any] = {"branch": c.branch or "main"}
    if c.cwd.endswith("/repo"):
        git |= {"commit_hash": head_at(s), "repository_url": "git@github.com:tallyho/tallyho.git"}
    add(s, "session_meta", {"id": c.sid, "timestamp": _iso(s), "cwd": c.cwd,
                            "originator": "codex_cli_rs", "cli_version": "0.77.0",
                            "instructions": None, "source": "cli", "model_provider": "openai",
                            "git": git})
    if rng.random() < 0.5:
        add(s, "response_item", {"type": "message", "role": "user", "content": [
            {"type": "input_text", "text": f"# AGENTS.md instructions for {c.cwd}\n\n"
             "<INSTRUCTIONS>\nRun the tests before you say you're done.\n</INSTRUCTIONS>"}]})
    add(s, "response_item", {"type": "message", "role": "user", "content": [
        {"type": "input_text", "text": f"<environment_context>\n  <cwd>{c.cwd}</cwd>\n"
         "  <approval_policy>on-request</approval_policy>\n"
         "  <sandbox_mode>workspace-write</sandbox_mode>\n  <shell>zsh</shell>\n"
         "</environment_context>"}]})
    for (kind, payload), t in zip(c.turns, times, strict=True):
        if kind == "person":
            text = _sub_shas(payload, shas)
            add(t, "response_item", {"type": "message", "role": "user",
                                     "content": [{"type": "input_text", "text": text}]})
            add(t, "event_msg", {"type": "user_message", "message": text, "images": []})
            add(t, "turn_context", {"cwd": c.cwd, "approval_policy": "on-request",
                                    "model": "gpt-5-codex", "summary": "auto"})
            if rng.random() < 0.5:
                add(t, "response_item", {"type": "reasoning", "summary": [
                    {"type": "summary_text", "text": "**Looking at the code**"}],
                    "content": None, "encrypted_content": "gAAAA" + "x" * 40})
        elif kind == "assistant":
            text = _sub_shas(payload, shas)
            add(t, "response_item", {"type": "message", "role": "assistant",
                                     "content": [{"type": "output_text", "text": text}]})
            add(t, "event_msg", {"type": "agent_message", "message": text})
        else:
            tool: Tool = payload
            cid = f"call_{rng.getrandbits(96):024x}"
            add(t, "response_item", {"type": "function_call", "name": tool.name,
                                     "arguments": json.dumps(tool.args), "call_id": cid})
            add(t + dt.timedelta(seconds=1), "response_item", {
                "type": "function_call_output", "call_id": cid,
                "output": json.dumps({"output": _sub_shas(tool.output, shas),
                                      "metadata": {"exit_code": 1 if tool.error else 0}})})
    path.write_text("\n".join(lines) + "\n")
    return path


def write_gemini(root: Path, c: Conv, rng: random.Random, fmt: str) -> Path:
    phash = hashlib.sha256(c.cwd.encode()).hexdigest()
    d = root / "tmp" / phash / "chats"
    d.mkdir(parents=True, exist_ok=True)
    s = c.start
    times = _times(c, rng)
    msgs: list[dict[str, Any]] = []
    for (kind, payload), t in zip(c.turns, times, strict=True):
        if kind == "tool":
            if msgs and msgs[-1]["type"] == "gemini":
                msgs[-1].setdefault("toolCalls", []).append(
                    {"id": f"{payload.name}-{rng.getrandbits(32)}", "name": payload.name,
                     "args": payload.args, "status": "success",
                     "resultDisplay": payload.output})
            continue
        m: dict[str, Any] = {"id": _uuid(rng), "timestamp": _iso(t),
                             "type": "user" if kind == "person" else "gemini",
                             "content": payload}
        if kind == "assistant":
            m["model"] = "gemini-2.5-pro"
            if rng.random() < 0.4:
                m["thoughts"] = [{"subject": "Considering the question",
                                  "description": "Weighing the options.",
                                  "timestamp": _iso(t)}]
        msgs.append(m)
    last = times[-1] + dt.timedelta(seconds=5)
    meta = {"sessionId": c.sid, "projectHash": phash, "startTime": _iso(s),
            "lastUpdated": _iso(last)}
    stem = f"session-{s:%Y-%m-%dT%H-%M}-{c.sid[:8]}"
    if fmt == "json":
        path = d / f"{stem}.json"
        path.write_text(json.dumps({**meta, "messages": msgs}, indent=2, ensure_ascii=False))
    else:
        path = d / f"{stem}.jsonl"
        meta["directories"] = [c.cwd]
        lines = [json.dumps(meta)] + [json.dumps(m, ensure_ascii=False) for m in msgs]
        if c.title:
            lines.append(json.dumps({"$set": {"summary": c.title, "lastUpdated": _iso(last)}}))
        path.write_text("\n".join(lines) + "\n")
    return path


def write_aider(convs: list[Conv], rng: random.Random) -> dict[str, tuple[Path, int, int]]:
    """One history file per directory, launches in time order; returns
    key -> (path, ordinal, 1-based header line)."""
    where: dict[str, tuple[Path, int, int]] = {}
    by_dir: dict[str, list[Conv]] = {}
    for c in convs:
        by_dir.setdefault(c.cwd, []).append(c)
    for d, cs in by_dir.items():
        lines: list[str] = []
        for ordinal, c in enumerate(sorted(cs, key=lambda c: c.start), 1):
            if lines:
                lines.append("")
            where[c.extra["key"]] = (Path(d) / ".aider.chat.history.md", ordinal, len(lines) + 1)
            lines += [f"# aider chat started at {c.start:%Y-%m-%d %H:%M:%S}", "",
                      "> Aider v0.82.2", "> Main model: anthropic/claude-sonnet-4 with diff "
                      "edit format", "> Git repo: .git with 42 files", ""]
            for kind, payload in c.turns:
                if kind == "person":
                    lines += [f"#### {ln}" for ln in payload.splitlines()] + [""]
                elif kind == "assistant":
                    lines += [*payload.splitlines(), ""]
                else:
                    lines += [f"> {ln}" for ln in payload.output.splitlines()]
                    lines += [f"> Commit {rng.getrandbits(28):07x} aider: edit", ""]
        Path(d).mkdir(parents=True, exist_ok=True)
        (Path(d) / ".aider.chat.history.md").write_text("\n".join(lines) + "\n")
    return where


def write_opencortex(memex: Path, c: Conv) -> Path:
    times = _times(c, random.Random(c.sid))
    cursor = [times[0]]
    try:
        from opencortex.sessions.recorder import SessionRecorder
    except ImportError:  # outside the venv: an equivalent writer
        SessionRecorder = None
    naive = [t.replace(tzinfo=None) for t in times]
    if SessionRecorder is not None:
        rec = SessionRecorder(memex, clock=lambda: cursor[0])
        path = None
        for (kind, payload), t in zip(c.turns, naive, strict=True):
            cursor[0] = t
            text = payload.output if kind == "tool" else payload
            path = rec.record(c.sid, kind, text)
        assert path is not None
        return path
    path = memex / "sessions" / f"{naive[0]:%Y}" / f"{naive[0]:%m}" / f"{naive[0]:%d}-{c.sid}.org"
    path.parent.mkdir(parents=True, exist_ok=True)
    out = f"#+TITLE: Session {c.sid}\n#+FILETAGS: :session:\n#+PROPERTY: SESSION {c.sid}\n\n"
    for (kind, payload), t in zip(c.turns, naive, strict=True):
        text = payload.output if kind == "tool" else payload
        head = " ".join(text.strip().splitlines()[0].split())[:80]
        body = re.sub(r"^([ \t]*)(,*(?:\*|#\+))", r"\1,\2", text.rstrip("\n"), flags=re.M)
        out += "\n".join([f"* [{t:%Y-%m-%d %a %H:%M}] {kind}: {head}", ":PROPERTIES:",
                          f":ORIGIN: {kind}", ":END:", "#+begin_example", body,
                          "#+end_example", ""])
    path.write_text(out)
    return path


def write_notes(memex: Path, notes: list[Note], rng: random.Random) -> None:
    by_file: dict[str, list[Note]] = {}
    for n in notes:
        by_file.setdefault(n.file, []).append(n)
    for rel, ns in by_file.items():
        path = memex / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if rel == "journal.org":
            out = ["#+TITLE: Journal", ""]
            year = month = day = None
            for n in sorted(ns, key=lambda n: n.when):
                t = n.when
                if t.year != year:
                    out.append(f"* {t.year}")
                    year, month = t.year, None
                if t.month != month:
                    out.append(f"** {t:%Y-%m} {t:%B}")
                    month, day = t.month, None
                if t.day != day:
                    out.append(f"*** {t:%Y-%m-%d %A}")
                    day = t.day
                out += [f"**** {n.title}", ":PROPERTIES:", f":ID: {_uuid(rng)}",
                        f":CREATED: [{t:%Y-%m-%d %a %H:%M}]", ":END:", n.body, ""]
        else:
            stem = Path(rel).stem
            out = [f"#+TITLE: {stem.capitalize()}", f"#+FILETAGS: :{stem}:", ""]
            for n in sorted(ns, key=lambda n: n.when):
                t = n.when
                head = f"* {n.todo + ' ' if n.todo else ''}{n.title}"
                if n.tags:
                    head += " " * max(1, 60 - len(head)) + ":" + ":".join(n.tags) + ":"
                out.append(head)
                if n.todo == "DONE":
                    out.append(f"CLOSED: [{t + dt.timedelta(hours=2):%Y-%m-%d %a %H:%M}]")
                out += [":PROPERTIES:", f":ID: {_uuid(rng)}",
                        f":CREATED: [{t:%Y-%m-%d %a %H:%M}]", ":END:", n.body, ""]
        path.write_text("\n".join(out))


# ---------------------------------------------------------------------------------------


def generate(out: Path, *, seed: int = 0, now: dt.datetime = DEFAULT_NOW,
             distractors: int = 60, sessions: int | None = None,
             commits: int | None = None) -> Path:
    """Write the corpus under ``out`` (must be empty or absent); returns ``cases.jsonl``."""
    out = Path(out).absolute()
    if out.exists() and any(out.iterdir()):
        raise FileExistsError(f"{out} is not empty")
    out.mkdir(parents=True, exist_ok=True)
    now = now if now.tzinfo else now.replace(tzinfo=UTC)
    now = now.astimezone(UTC)
    w = World(out, now, random.Random(seed))
    stories(w)
    add_distractors(w, distractors, sessions, commits)
    shas = build_repo(w)
    timeline = w.timeline

    stamps = [when for when, _ in timeline]

    def head_at(t: dt.datetime) -> str:  # the commit checked out when a session started
        return timeline[max(0, bisect.bisect_right(stamps, t) - 1)][1]

    rng = w.rng
    locs: dict[str, tuple[str, str, str]] = {}  # key -> (source, id, locator fragment)
    broken: dict[str, int] = {}
    first_dist_claude = True
    aider_convs = []
    for c in w.convs:
        key = c.extra["key"]
        if c.source == "claude-code":
            brk = first_dist_claude and key.startswith("dist-")
            first_dist_claude = first_dist_claude and not brk
            p = write_claude(out / "claude", c, rng, shas, broken=brk)
            if brk:
                broken[str(p.relative_to(out))] = 1
        elif c.source == "codex":
            p = write_codex(out / "codex", c, rng, shas, head_at)
        elif c.source == "gemini":
            p = write_gemini(out / "gemini", c, rng, c.extra.get("fmt", "jsonl"))
        elif c.source == "opencortex":
            p = write_opencortex(out / "memex", c)
        else:
            aider_convs.append(c)
            continue
        locs[key] = (c.source, c.sid, str(p.relative_to(out)))
    for key, (p, ordinal, line) in write_aider(aider_convs, rng).items():
        sid = f"{hashlib.sha1(str(p.resolve()).encode()).hexdigest()[:12]}-{ordinal}"
        locs[key] = ("aider", sid, f"{p.relative_to(out)}:{line}-")
    write_notes(out / "memex", w.notes, rng)
    for n in w.notes:
        locs[n.key] = ("notes", f"{n.file}::{n.title}", f"memex/{n.file}")
    for key, sha in shas.items():
        locs[key] = ("git", sha, sha)

    cases_path = out / "cases.jsonl"
    with cases_path.open("w") as f:
        for case in w.cases:
            src, rid, loc = locs[case.key]
            assert src == case.source, (case.id, src)
            target: dict[str, Any] = {"source": src, "id": rid, "locator_contains": loc,
                                      "time": case.when.isoformat()}
            if case.turn_contains:
                target["turn_contains"] = case.turn_contains
            row = {"id": case.id, "cue": case.cue, "added_cue": case.added_cue,
                   "whole": case.whole, "now": now.isoformat(), "target": target,
                   "kind": case.kind,
                   "time_range": ([t.isoformat() for t in case.time_range]
                                  if case.time_range else None),
                   "near_misses": [{"source": locs[k][0], "id": locs[k][1]}
                                   for k in case.near]}
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    counts: dict[str, int] = {}
    for c in w.convs:
        counts[c.source] = counts.get(c.source, 0) + 1
    counts["git"] = len(w.commits) + 1
    counts["notes"] = len(w.notes)
    (out / "corpus.json").write_text(json.dumps({
        "seed": seed, "now": now.isoformat(), "repo": w.repo, "counts": counts,
        "roots": {"claude-code": "claude", "codex": "codex", "gemini": "gemini",
                  "aider": "aider", "opencortex": "memex", "notes": "memex", "git": "repo"},
        "deliberately_skipped_lines": broken}, indent=2) + "\n")
    return cases_path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--distractors", type=int, default=60)
    ap.add_argument("--sessions", type=int, default=None,
                    help="scale mode: this many extra Claude Code/Codex sessions")
    ap.add_argument("--commits", type=int, default=None,
                    help="scale mode: this many extra git commits")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--now", default=DEFAULT_NOW.isoformat(),
                    help="ISO datetime the cases are asked at (default %(default)s)")
    ap.add_argument("--force", action="store_true", help="delete OUT first")
    a = ap.parse_args(argv)
    if a.force and a.out.exists():
        shutil.rmtree(a.out)
    now = dt.datetime.fromisoformat(a.now.replace("Z", "+00:00"))
    t0 = time.perf_counter()
    cases = generate(a.out, seed=a.seed, now=now, distractors=a.distractors,
                     sessions=a.sessions, commits=a.commits)
    counts = json.loads((a.out / "corpus.json").read_text())["counts"]
    n = sum(1 for _ in cases.open())
    print(f"wrote {n} cases to {cases} in {time.perf_counter() - t0:.1f} s; records: "
          + ", ".join(f"{k} {v}" for k, v in counts.items()), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
