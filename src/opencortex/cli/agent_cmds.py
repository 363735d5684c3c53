"""Agent commands: ask (one request through the whole pipeline), route (its intents)."""

from __future__ import annotations

import click

from ..sessions.ids import click_session
from .output import answer_jsonl, common_options, emit, open_memex


@click.command()
@click.argument("text", nargs=-1, required=True)
@click.option("--session", default=None, callback=click_session,
              help="Session id (the conversation's record file): 1-64 of A-Z a-z 0-9 . _ -.")
@click.option("--timeout", type=float, default=120.0, show_default=True)
@common_options
def ask(text: tuple[str, ...], session: str | None, timeout: float, memex: str | None,
        index: str | None, json_: bool) -> None:
    """Ask the agent (offline reasoner unless a model is configured)."""
    from ..pipeline.kernel import Kernel

    m = open_memex(memex, index)
    with m:
        m.sync()
        k = Kernel(m, reasoner=_reasoner(m))
        k.approval_timeout = 0  # nobody to approve here: "ask" actions are reported
        try:
            replies = k.ask_full(" ".join(text), session=session, timeout=timeout)
        finally:
            k.shutdown(timeout=5)
    final = next((d for _, d in reversed(replies) if isinstance(d, dict) and "intents" in d),
                 {})
    out = {"intents": final.get("intents", []), "results": final.get("results", []),
           "answer": final.get("answer") or "\n\n".join(t for t, _ in replies),
           "citations": final.get("citations", []), "replies": [t for t, _ in replies],
           "via": "model" if k.reasoner.has_model else "offline"}
    emit(out, json_, lambda: click.echo("\n\n".join(t for t, _ in replies) or "(no reply)"))


def _reasoner(m):
    from ..reason.reasoner import Reasoner

    try:
        from ..llm import gateway_from_settings

        gw = gateway_from_settings(m.settings)
    except ImportError:
        gw = None
    return Reasoner(gw if gw is not None and gw.configured else None)


@click.command()
@click.argument("text", nargs=-1)
@click.option("--queries", type=click.File("r"), default=None,
              help="JSON lines with a 'text' field: one JSON result line per input, in order.")
@common_options
def route(text: tuple[str, ...], queries, memex: str | None, index: str | None,
          json_: bool) -> None:
    """Decompose a request into intents (what the router would delegate)."""
    import json as _json

    from ..config import load_settings
    from ..skills.router import route as do_route

    settings = load_settings(memex=memex, index=index)
    try:
        from ..llm import gateway_from_settings

        gw = gateway_from_settings(settings)
    except Exception:
        gw = None
    if queries is not None:
        answer_jsonl(queries, "text", lambda t: {"intents": do_route(t, gw)})
        return
    if not text:
        raise click.UsageError("give TEXT or --queries FILE")
    intents = do_route(" ".join(text), gw)
    emit({"intents": intents}, json_, lambda: [click.echo(_json.dumps(i, ensure_ascii=False))
                                              for i in intents])
