"""The kernel loop's half of delegation: an actuator hands back a ``Delegation`` and the
loop runs its intents, in order, on this thread (so a full pool cannot deadlock), then
composes one reply ``{intents, results, answer, citations}``.  Act never calls up here."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..signal import Delegation, Intent, Signal

__all__ = ["compose", "run_intents"]

Process = Callable[[Signal], Signal]


def _run(process: Process, parent: Signal, text: str, args: dict[str, Any]
         ) -> list[tuple[str, Any]]:
    got: list[tuple[str, Any]] = []
    sub = parent.feedback("delegation", text=text, **args)
    sub.meta = {**sub.meta, "reply": lambda t, d=None: got.append((t, d)), "record": False}
    process(sub)
    return got


def run_intents(process: Process, d: Delegation) -> tuple[str, dict[str, Any]]:
    """Run each intent of ``d`` through ``process``; the composed reply (text, data)."""
    intents: list[Intent] = d.intents or []
    results = []
    citations: list[str] = []
    for it in intents:
        args = {k: v for k, v in it.items() if k != "text"}
        got = _run(process, d.signal, str(it.get("text") or it.get("query") or ""), args)
        if not got and it.get("target") == "review":
            # no review skill answered (none installed): the lists' own skill does
            got = _run(process, d.signal, str(it.get("text") or ""),
                       {**args, "target": "gtd"})
            args = {**args, "target": "gtd"}
        text = "\n".join(t for t, _ in got) or "(no result)"
        data: dict[str, Any] = {}
        for _, dd in got:
            if isinstance(dd, dict):
                citations += [c for c in dd.get("citations", []) if c not in citations]
                data.update({k: v for k, v in dd.items() if k != "citations"})
        results.append({"target": it.get("target"), "args": args, "text": text,
                        **({"data": data} if data else {})})
    answer = compose(results)
    return answer, {"intents": intents, "results": results, "answer": answer,
                    "citations": citations}


def compose(results: list[dict[str, Any]]) -> str:
    """One result as it is; several numbered with their target."""
    if len(results) == 1:
        return str(results[0]["text"])
    return "\n\n".join(f"{i}. [{r['target']}] {r['text']}" for i, r in enumerate(results, 1))
