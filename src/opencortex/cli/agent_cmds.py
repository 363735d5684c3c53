"""Agent commands: ask (one request through the whole pipeline), route (its intents)."""

from __future__ import annotations

import threading

import click

from ..sessions.ids import click_session
from .output import answer_jsonl, common_options, emit, open_runtime


@click.command()
@click.argument("text", nargs=-1, required=True)
@click.option("--session", default=None, callback=click_session,
              help="Session id (the conversation's record file): 1-64 of A-Z a-z 0-9 . _ -.")
@click.option("--timeout", type=float, default=120.0, show_default=True)
@common_options
def ask(text: tuple[str, ...], session: str | None, timeout: float, memex: str | None,
        index: str | None, json_: bool) -> None:
    """Ask the agent (offline reasoner unless a model is configured)."""
    # the router's model (onnxruntime session, classifier) loads on a thread while this one
    # imports the kernel and syncs the index: a fresh `ask` is ~0.2 s sooner (issue 16)
    warm = threading.Thread(target=_warm_router, name="oc-warm", daemon=True)
    warm.start()
    with open_runtime(memex, index) as rt:
        rt.memex.sync()
        k = rt.kernel(approval_timeout=0)  # nobody to approve here: "ask" actions are reported
        shown: list[str] = []  # a model answer's words, printed as they come (not with --json)

        def partial(piece: str) -> None:
            shown.append(piece)
            click.echo(piece, nl=False)

        try:
            replies = k.ask_full(" ".join(text), session=session, timeout=timeout,
                                 partial=None if json_ else partial)
        finally:
            k.shutdown(timeout=5)
        via = rt.via
    warm.join(timeout=5)  # never exit inside onnxruntime's start-up
    final = next((d for _, d in reversed(replies) if isinstance(d, dict) and "intents" in d),
                 {})
    out = {"intents": final.get("intents", []), "results": final.get("results", []),
           "answer": final.get("answer") or "\n\n".join(t for t, _ in replies),
           "citations": final.get("citations", []), "replies": [t for t, _ in replies],
           "via": via}
    def human() -> None:
        said = "\n\n".join(t for t, _ in replies) or "(no reply)"
        streamed = "".join(shown)
        if streamed and said.startswith(streamed):  # the verified answer is what was shown
            click.echo(said[len(streamed):])
        else:
            click.echo(("\n\n" if streamed else "") + said)

    emit(out, json_, human)


def _warm_router() -> None:
    """Build the default embedder and load the router's classifier (what a worded request
    needs first); a failure here is the request's to report, not this thread's."""
    try:
        from ..router.decompose import warm

        warm()
    except Exception:  # no model installed: the request answers without it
        pass


@click.command()
@click.argument("text", nargs=-1)
@click.option("--queries", type=click.File("r"), default=None,
              help="JSON lines with a 'text' field: one JSON result line per input, in order.")
@common_options
def route(text: tuple[str, ...], queries, memex: str | None, index: str | None,
          json_: bool) -> None:
    """Decompose a request into intents (what the router would delegate)."""
    import json as _json

    from ..skills.router import route as do_route

    gw = open_runtime(memex, index).gateway  # touches no memex: nothing to close
    if queries is not None:
        answer_jsonl(queries, "text", lambda t: {"intents": do_route(t, gw)})
        return
    if not text:
        raise click.UsageError("give TEXT or --queries FILE")
    intents = do_route(" ".join(text), gw)
    def human() -> None:
        for i in intents:
            click.echo(_json.dumps(i, ensure_ascii=False))

    emit({"intents": intents}, json_, human)
