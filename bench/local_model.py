"""The model path against a real local model, next to the offline reasoner, in one run.

Starts llama.cpp's OpenAI-compatible server (llama-cpp-python, ../shared/tools/local-model:
`setup.sh serve [0.5b]`) with each model asked for, then runs the same requests offline and
through the model path:

- router: router-dev-2 (the router skill through the Reasoner, on a copy of
  examples/memex; exact target sequence);
- notes: notes questions with known source notes (`ask` in process; right = the answer
  states the fact and a citation names the source file, as ../shared/tools/notes_eval.py
  scores), plus small talk (chat rows of the router set: answered at all, not a refusal);
- gtd: gtd-dev through bench/gtd_eval.py (the shared checker: the CLI on a fresh memex
  per request, judged by Emacs), offline and with OPENCORTEX_LLM_* pointing at the server.

Reports accuracy per set, `ask` latency p50/p95, prompt tokens per model call (the server's
own `usage.prompt_tokens`), fallbacks to the offline answer, and requests the model path
ended worse than offline; the load average before and after.

Run: .venv/bin/python bench/local_model.py [--models 1.5b,0.5b] [--limit N] [--sets
     router,notes,gtd] [--notes FILE] [--base-url URL --model NAME (a running server)]
     [--profile small|large] [--budget S] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
SHARED = ROOT.parent / "shared"
SETUP = SHARED / "tools" / "local-model" / "setup.sh"
ALIAS = {"1.5b": "qwen2.5-coder-1.5b-instruct", "0.5b": "qwen2.5-coder-0.5b-instruct"}
STATE = Path.home() / ".cache" / "local-model"


# -- the server -----------------------------------------------------------------------------
def _up(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/models", timeout=3) as r:
            return r.status == 200
    except OSError:
        return False


def serve(size: str, port: int) -> tuple[str, int | None]:
    """Start the shared setup's server for ``size``; its base URL and pid."""
    url = f"http://127.0.0.1:{port}/v1"
    if _up(url):
        raise SystemExit(f"something already serves {url}: stop it, or pass --base-url")
    env = dict(os.environ, PORT=str(port))
    subprocess.run(["bash", str(SETUP), "serve", size], env=env, check=False)
    pid_file = STATE / "logs" / f"server-{port}.pid"
    pid = int(pid_file.read_text().strip()) if pid_file.exists() else None
    if not _up(url):
        raise SystemExit(f"the server did not come up: see {STATE}/logs/server-{port}.log")
    return url, pid


def stop(pid: int | None) -> None:
    if pid is None:
        return
    try:
        os.kill(pid, 15)
        for _ in range(50):
            os.kill(pid, 0)
            time.sleep(0.1)
    except ProcessLookupError:
        pass


# -- data ------------------------------------------------------------------------------------
def _rows(path: Path, limit: int | None) -> list[dict[str, Any]]:
    rows = [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
    return rows[:limit] if limit else rows


def _notes_file(given: str | None) -> Path:
    if given:
        return Path(given)
    own = ROOT / "bench" / "data" / "notes-qa-own.jsonl"
    return own if own.exists() else SHARED / "eval" / "notes-qa-dev.jsonl"


def _pct(xs: list[float], q: float) -> float | None:
    if not xs:
        return None
    s = sorted(xs)
    return round(s[min(len(s) - 1, round(q * (len(s) - 1)))], 2)


# -- one side (offline or a model) -----------------------------------------------------------
class Side:
    """A kernel over one memex copy: offline (``gateway`` None) or through the model."""

    def __init__(self, memex: Any, gateway: Any) -> None:
        from opencortex.pipeline.kernel import Kernel
        from opencortex.reason.reasoner import Reasoner

        self.decisions: list[Any] = []
        self.reasoner = Reasoner(gateway, observer=self.decisions.append)
        self.kernel = Kernel(memex, reasoner=self.reasoner, record_sessions=False)
        self.kernel.approval_timeout = 0  # nobody approves here: asked actions are reported
        self.memex = memex

    def ask(self, text: str) -> tuple[dict[str, Any], float, list[Any]]:
        start = len(self.decisions)
        t0 = time.perf_counter()
        replies = self.kernel.ask_full(text, timeout=600)
        took = time.perf_counter() - t0
        final = next((d for _, d in reversed(replies) if isinstance(d, dict) and "intents" in d),
                     {})
        out = {"answer": final.get("answer") or "\n\n".join(t for t, _ in replies),
               "citations": final.get("citations", [])}
        return out, took, self.decisions[start:]

    def route(self, text: str) -> list[str]:
        from opencortex.signal import Signal
        from opencortex.skills.base import Context

        sig = Signal(type="request", payload={"sensor": "user-input", "text": text},
                     meta={"source": "cli"})
        ctx = Context(sig, self.memex)
        with self.memex.lock:
            d = self.reasoner.decide(ctx, [s for s in self.kernel.registry.skills()
                                           if s.name == "router"])
        if d.action is None:
            return []
        return [str(i.get("target")) for i in d.action.args.get("intents", [])]

    def close(self) -> None:
        self.kernel.shutdown(timeout=5)


def _ids(root: Path) -> dict[str, str]:
    out = {}
    for p in root.rglob("*.org"):
        for i in re.findall(r"(?im)^\s*:ID:\s*(\S+)", p.read_text(errors="replace")):
            out[i] = str(p.relative_to(root))
    return out


def _bounded(h: str) -> str:
    return (r"(?<!\w)" if h[0].isalnum() else "") + re.escape(h) + \
        (r"(?!\w)" if h[-1].isalnum() else "")


def notes_right(case: dict[str, Any], out: dict[str, Any], ids: dict[str, str]) -> tuple[bool, bool]:
    """(fact stated, source cited) as ../shared/tools/notes_eval.py judges them."""
    ans = out.get("answer") or ""
    files = {ids.get(x[3:]) if x.startswith("id:") else x.split("::")[0].split(":")[0]
             for x in out.get("citations") or []}
    fact = any(re.search(_bounded(h), ans, re.I) for h in case.get("has", [])) or any(
        re.search(r, ans, re.I) for r in case.get("re", []))
    want = case["file"] if isinstance(case["file"], list) else [case["file"]]
    return fact, bool(files & set(want))


def _calls(decisions: list[Any]) -> list[Any]:
    return [c for d in decisions for c in d.calls]


# -- the sets ---------------------------------------------------------------------------------
def run_router(sides: dict[str, Side], rows: list[dict[str, Any]]) -> dict[str, Any]:
    res: dict[str, Any] = {"n": len(rows)}
    right: dict[str, list[bool]] = {}
    for name, side in sides.items():
        start = len(side.decisions)
        right[name] = [side.route(r["text"]) == list(r["intents"]) for r in rows]
        calls = _calls(side.decisions[start:])
        res[name] = {"right": sum(right[name]), "model_calls": len(calls),
                     "prompt_tokens": [c.prompt_tokens for c in calls if c.prompt_tokens],
                     "fallbacks": sum(1 for d in side.decisions[start:] if d.fallback)}
    if "model" in right:
        res["worse"] = sum(o and not m for o, m in zip(right["offline"], right["model"],
                                                       strict=True))
    return res


def run_notes(sides: dict[str, Side], rows: list[dict[str, Any]], chat: list[str],
              root: Path) -> dict[str, Any]:
    from opencortex.reason.reasoner import NOT_USED, is_refusal

    ids = _ids(root)
    res: dict[str, Any] = {"n": len(rows), "chat_n": len(chat)}
    right: dict[str, list[bool]] = {}
    for name, side in sides.items():
        lat, ok, cited, fb, tokens, calls_n, chat_ok = [], [], [], 0, [], 0, 0
        rows_out = []
        gw = side.reasoner.gateway
        for case in rows:
            sent = len(gw.sent) if gw is not None else 0
            out, took, ds = side.ask(case["q"])
            if gw is not None:
                tokens += prompt_tokens(gw, sent)
            fact, cite = notes_right(case, out, ids)
            lat.append(took)
            ok.append(fact and cite)
            cited.append(cite)
            fb += sum(1 for d in ds if d.fallback)
            calls_n += len(_calls(ds))
            rows_out.append(f"{'ok  ' if fact and cite else 'FAIL'} fact={fact} cite={cite} "
                            f"{took:5.1f}s fb={sum(1 for d in ds if d.fallback)} {case['q'][:60]}")
        for text in chat:
            sent = len(gw.sent) if gw is not None else 0
            out, took, ds = side.ask(text)
            if gw is not None:
                tokens += prompt_tokens(gw, sent)
            lat.append(took)
            ans = out["answer"]
            fb += sum(1 for d in ds if d.fallback)
            calls_n += len(_calls(ds))
            good = bool(ans.strip()) and not is_refusal(ans) and NOT_USED not in ans \
                and "can't answer that offline" not in ans
            chat_ok += good
            rows_out.append(f"{'ok  ' if good else 'FAIL'} chat {took:5.1f}s "
                            f"{text[:40]!r} -> {ans[:70]!r}")
        right[name] = ok
        res[name] = {"right": sum(ok), "cited": sum(cited), "chat_answered": chat_ok,
                     "p50_s": _pct(lat, 0.5), "p95_s": _pct(lat, 0.95),
                     "model_calls": calls_n, "prompt_tokens": tokens, "fallbacks": fb,
                     "rows": rows_out}
    if "model" in right:
        res["worse"] = sum(o and not m for o, m in zip(right["offline"], right["model"],
                                                       strict=True))
    return res


_GTD_OFFLINE: dict[str, Any] = {}


def run_gtd(url: str | None, model: str | None, limit: int | None, profile: str,
            budget: float) -> dict[str, Any]:
    """bench/gtd_eval.py offline (once per bench run) and with the model (its checker runs
    the CLI per case)."""
    res: dict[str, Any] = {}
    per: dict[str, list[bool]] = {}
    sides: list[tuple[str, dict[str, Any]]] = []
    if _GTD_OFFLINE:
        res["offline"], per["offline"] = _GTD_OFFLINE["res"], _GTD_OFFLINE["per"]
    else:
        sides.append(("offline", {}))
    if url:
        sides.append(("model", {"OPENCORTEX_LLM_BASE_URL": url, "OPENCORTEX_LLM_MODEL": model,
                                "OPENCORTEX_LLM_PROFILE": profile,
                                "OPENCORTEX_LLM_BUDGET": str(budget)}))
    cases = SHARED / "eval" / "gtd-dev.jsonl"
    tmp = None
    if limit:
        tmp = Path(tempfile.mkdtemp(prefix="lm-gtd-")) / "cases.jsonl"
        tmp.write_text("\n".join(cases.read_text().splitlines()[:limit]) + "\n")
        cases = tmp
    for name, extra in sides:
        env = {k: v for k, v in os.environ.items() if not k.startswith("OPENCORTEX_LLM")}
        env.update({k: v for k, v in extra.items() if v})
        t0 = time.perf_counter()
        p = subprocess.run([sys.executable, str(ROOT / "bench" / "gtd_eval.py"), "--cases",
                            str(cases)], capture_output=True, text=True, env=env)
        took = time.perf_counter() - t0
        marks = re.findall(r"^\[(\d+)\] (ok  |FAIL)", p.stdout, re.M)
        per[name] = [m[1] == "ok  " for m in marks]
        res[name] = {"right": sum(per[name]), "n": len(per[name]),
                     "seconds_per_case": round(took / max(1, len(per[name])), 1),
                     "fails": [x for x in p.stdout.splitlines() if "FAIL" in x][:10]}
        if name == "offline":
            _GTD_OFFLINE.update(res=res[name], per=per[name])
    if "model" in per and len(per["model"]) == len(per["offline"]):
        res["worse"] = sum(o and not m for o, m in zip(per["offline"], per["model"],
                                                       strict=True))
    return res


# -- main --------------------------------------------------------------------------------------
def _memex(work: Path) -> Any:
    from opencortex.memex import Memex
    from opencortex.retrieval.hybrid import retriever_for

    root = work / "memex"
    if not root.exists():
        shutil.copytree(ROOT / "examples" / "memex", root)
    m = Memex(root, index=work / "index.sqlite3")
    m.sync()
    r = retriever_for(m)
    r.keyword.sync(m.store)
    r.vectors.embed_pending(lambda t: r.embedder.embed(t))
    return m


def _gateway(url: str, model: str, profile: str, budget: float) -> Any:
    from opencortex.llm import Gateway, preset

    class Counting(Gateway):
        """Keeps the messages of every call, so their size can be asked of the server."""

        def __init__(self, *args: Any, **kw: Any) -> None:
            super().__init__(*args, **kw)
            self.sent: list[Any] = []

        def stream(self, messages: Any, *args: Any, **kw: Any) -> Any:
            self.sent.append(list(messages))
            return super().stream(messages, *args, **kw)

    p = preset("llamacpp", "local", base_url=url, models={"fast": model, "smart": model},
               timeout=300.0, max_retries=0)
    return Counting([p], profile=profile, budget=budget)


def prompt_tokens(gw: Any, start: int) -> list[int]:
    """The server's own ``usage.prompt_tokens`` for each call sent since ``start``: the same
    messages again, not streamed, one output token (llama-cpp-python sends no usage in a
    stream; its KV cache holds the prompt just read, so this costs little)."""
    out = []
    for msgs in gw.sent[start:]:
        try:
            c = gw.complete(msgs, max_tokens=1)
        except Exception:
            continue
        n = (c.usage or {}).get("prompt_tokens")
        if isinstance(n, int):
            out.append(n)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", default="1.5b", help="comma-separated: 1.5b,0.5b")
    ap.add_argument("--base-url", default=None, help="a running server (no --models start)")
    ap.add_argument("--model", default=None, help="its model name (with --base-url)")
    ap.add_argument("--port", type=int, default=8090)
    ap.add_argument("--sets", default="router,notes,gtd")
    ap.add_argument("--limit", type=int, default=None, help="first N rows of each set")
    ap.add_argument("--notes", default=None, help="notes questions (default: "
                    "bench/data/notes-qa-own.jsonl, else ../shared/eval/notes-qa-dev.jsonl)")
    ap.add_argument("--notes-limit", type=int, default=20, help="first N notes questions")
    ap.add_argument("--chat", type=int, default=8, help="small-talk rows (router set's chat)")
    ap.add_argument("--gtd-models", default="1.5b",
                    help="the models gtd-dev runs with (it is slow: a CLI per case)")
    ap.add_argument("--profile", default="small")
    ap.add_argument("--budget", type=float, default=None)
    ap.add_argument("--workdir", default=None)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    from opencortex.llm.profiles import profile as get_profile

    budget = a.budget or get_profile(a.profile).budget
    sets = set(a.sets.split(","))
    work = Path(a.workdir or tempfile.mkdtemp(prefix="local-model-"))
    work.mkdir(parents=True, exist_ok=True)
    load0 = os.getloadavg()
    router_rows = _rows(SHARED / "eval" / "router-dev-2.jsonl", a.limit)
    all_router = _rows(SHARED / "eval" / "router-dev-2.jsonl", None)
    chat = [r["text"] for r in all_router if r["intents"] == ["chat"]][:a.chat]
    notes_path = _notes_file(a.notes)
    notes_rows = [r for r in _rows(notes_path, None) if r.get("memex", "example") == "example"]
    notes_rows = notes_rows[:a.limit or a.notes_limit]
    memex = _memex(work)
    report: dict[str, Any] = {"bench": "local_model", "profile": a.profile, "budget": budget,
                              "notes_file": str(notes_path), "runs": []}
    runs = [(a.model or "served", a.base_url)] if a.base_url else [
        (size.strip(), None) for size in a.models.split(",") if size.strip()]
    offline = Side(memex, None)
    try:
        for size, url in runs:
            pid = None
            if url is None:
                url, pid = serve(size, a.port)
            model = a.model or ALIAS.get(size, size)
            try:
                side = Side(memex, _gateway(url, model, a.profile, budget))
                sides = {"offline": offline, "model": side}
                run: dict[str, Any] = {"model": model, "url": url}
                if "router" in sets:
                    run["router"] = run_router(sides, router_rows)
                if "notes" in sets:
                    run["notes"] = run_notes(sides, notes_rows, chat, memex.root)
                if "gtd" in sets and (a.base_url or size in a.gtd_models.split(",")):
                    run["gtd"] = run_gtd(url, model, a.limit, a.profile, budget)
                run["structured_output"] = side.reasoner.gateway.output_form("local")
                side.close()
            finally:
                stop(pid)
            report["runs"].append(run)
            _print(run, a.json)
    finally:
        offline.close()
        memex.close()
    report["load_before"] = [round(x, 2) for x in load0]
    report["load_after"] = [round(x, 2) for x in os.getloadavg()]
    report["cpus"] = os.cpu_count()
    print(json.dumps({k: v for k, v in report.items() if k != "runs"}
                     | {"runs": [_summary(r) for r in report["runs"]]}))
    return 0


def _summary(run: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"model": run["model"], "output_form": run.get("structured_output")}
    for key in ("router", "notes", "gtd"):
        if key not in run:
            continue
        r = run[key]
        s: dict[str, Any] = {"worse": r.get("worse")}
        for side in ("offline", "model"):
            if side in r:
                d = r[side]
                s[side] = {k: v for k, v in d.items() if k not in ("rows", "prompt_tokens",
                                                                    "fails")}
                toks = d.get("prompt_tokens")
                if toks:
                    s[side]["prompt_tokens_median"] = statistics.median(toks)
                    s[side]["prompt_tokens_max"] = max(toks)
        s["n"] = r.get("n", r.get("offline", {}).get("n"))
        out[key] = s
    return out


def _print(run: dict[str, Any], as_json: bool) -> None:
    if as_json:
        return
    print(f"## {run['model']}")
    for key in ("router", "notes", "gtd"):
        if key in run:
            for side in ("offline", "model"):
                for line in run[key].get(side, {}).get("rows", []):
                    print(f"{key} {side}: {line}")
                for line in run[key].get(side, {}).get("fails", []):
                    print(f"{key} {side}: {line}")
    print(json.dumps(_summary(run), indent=1))


if __name__ == "__main__":
    raise SystemExit(main())
