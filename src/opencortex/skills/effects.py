"""The built-in skills' own actuators and write ops: ``web`` and ``websearch`` (websearch),
``skill.trust`` (/trust), and the ``memex.write`` ops ``todo/schedule/deadline/gtd`` (gtd),
``project`` (foundry), ``save/unsave`` (save), ``link`` (links), ``skill`` (skill-creator).

Registered by ``register`` through the same registrar a third-party plugin's entry point
gets (``SkillRegistry``), so the actuator table has no name it knows in advance."""

from __future__ import annotations

import urllib.error
from typing import Any

from ..act.registry import ActEnv
from ..guard import Pending
from ..guard.action import Action
from ..guard.trust import sha256
from ..signal import Signal
from . import foundry, gtd, links, save, skill_creator, websearch

__all__ = ["WEB_MAX_BYTES", "register"]

WEB_MAX_BYTES = 2_000_000


def register(r: Any) -> None:
    r.actuator("web", web)
    r.actuator("websearch", web_search)
    r.actuator("skill.trust", skill_trust)
    for op in ("todo", "schedule", "deadline", "gtd"):
        r.write_op(op, _gtd)
    r.write_op("project", _project)
    r.write_op("save", _save)
    r.write_op("unsave", _save)
    r.write_op("link", _link)
    r.write_op("skill", _skill)


# -- write ops (run by memex.write under the lock, in the signal's batch) ---------------
def _gtd(action: Action, signal: Signal, env: ActEnv) -> tuple[str, Any]:
    hide = _hide_for(signal, env)
    if hide is not None:  # a client not trusted with private notes never changes one
        from ..errors import NodeNotFoundError

        a = action.args
        refs = [a.get("ref")] + [st.get("ref") for st in a.get("steps") or []
                                 if isinstance(st, dict)]
        for ref in refs:
            if isinstance(ref, str) and ref and ref != "@new":
                with env.memex_lock:
                    n = env.memex.resolve(ref, visible=lambda x: not hide(x.tags))
                if hide(n.tags):
                    raise NodeNotFoundError(f"no node matches {ref!r} that this client "
                                            "may see")
    return gtd.apply_memex_op(env.memex, action.args)


def _project(action: Action, signal: Signal, env: ActEnv) -> tuple[str, Any]:
    return foundry.apply_memex_op(env.memex, action.args)


def _save(action: Action, signal: Signal, env: ActEnv) -> tuple[str, Any]:
    m = env.memex
    text, data = save.apply_memex_op(m, action.args, hide=_hide_for(signal, env))
    if action.args.get("op") == "save":
        save.note_saved(m.root, signal.meta.get("session"), m.writer.batch,
                        str(action.args["path"]))
    return text, data


def _hide_for(signal: Signal, env: ActEnv) -> Any:
    """The signal's sender's test of what is withheld (None: it sees private notes)."""
    from ..access import Access

    return Access.for_signal(env.memex, signal.meta).hide


def _link(action: Action, signal: Signal, env: ActEnv) -> tuple[str, Any]:
    return links.apply_memex_op(env.memex, action.args, hide=_hide_for(signal, env))


def _skill(action: Action, signal: Signal, env: ActEnv) -> tuple[str, Any]:
    ok = signal.meta.get("approval")  # the guard always asks for skill code
    if not isinstance(ok, Pending):
        return skill_creator.apply_memex_op(env.memex, action.args, registry=env.registry)
    return skill_creator.apply_memex_op(env.memex, action.args, registry=env.registry,
                                        trust=env.registry.trust, by=f"approval {ok.id}")


# -- actuators ----------------------------------------------------------------------
def web(action: Action, signal: Signal, env: ActEnv) -> Signal:
    """Readable text of a page (size/time limits; every resolved address re-checked
    against private ranges at connect time, so DNS rebinding cannot reach the LAN)."""
    url = str(action.args.get("url", ""))
    try:
        title, text = websearch.fetch_readable(
            url, max_bytes=WEB_MAX_BYTES,
            allow_private=env.guard.policy.web.allow_private_hosts)
        status, text = 200, (f"{title}\n\n{text}" if title else text)
    except (websearch.WebError, OSError, ValueError, urllib.error.URLError) as e:
        status, text = 0, f"fetch failed: {e}"
    return signal.feedback("tool-output", tool="web", url=url, returncode=status,
                           text=text[:20_000], truncated=len(text) > 20_000)


NOTES_EMPTY = "Nothing in your notes answers that, so I searched the web.\n"
"""What a web search's reply starts with when the router sent a question there only because
the notes had no answer (the person did not ask for the web): the reply says so."""


def web_search(action: Action, signal: Signal, env: ActEnv) -> None:
    endpoint = websearch.search_endpoint(env.memex.settings)
    lead = NOTES_EMPTY if signal.payload.get("notes_empty") is True else ""
    if not endpoint:
        env.reply(signal, f"{lead}No web search endpoint is configured: set [web] "
                  "search_endpoint = \"http://…\" (a SearXNG instance) in config.toml "
                  "or OPENCORTEX_SEARCH_ENDPOINT.", None)
        return None
    try:
        query = str(action.args["query"])
        results = websearch.search(query, endpoint, allow_private=True)
        env.reply(signal, lead + websearch.format_results(query, results),
                  {"results": results, "notes_empty": bool(lead)})
    except (websearch.WebError, OSError, ValueError) as e:
        env.reply(signal, f"{lead}Web search failed: {e}", None)
    return None


def skill_trust(action: Action, signal: Signal, env: ActEnv) -> None:
    """Record the approved bytes as trusted (only after the person approved them)."""
    ok = signal.meta.get("approval")
    a = action.args
    reg = env.registry
    if not isinstance(ok, Pending):
        env.reply(signal, "Not trusted: trusting code needs your approval.", None)
        return None
    root = env.memex.root
    try:
        now = (root / a["path"]).read_bytes()
    except OSError as e:
        env.reply(signal, f"Not trusted: cannot read {a['path']}: {e.strerror}", None)
        return None
    if sha256(now) != a["sha256"]:
        env.reply(signal, f"Not trusted: {a['path']} changed after you approved it; "
                  "ask again to see its current code.", None)
        return None
    name = str(a.get("name") or a["path"].rsplit("/", 1)[-1].removesuffix(".org"))
    reg.trust.trust(root, a["path"], name, now, by=f"approval {ok.id}")
    with env.memex_lock:
        reg.load_literate(root / a["path"].split("/", 1)[0])
    st = next((s for s in reg.statuses()
               if s.source == f"literate:{root / a['path']}"), None)
    env.reply(signal, f"Trusted {a['path']} (sha256 {a['sha256'][:16]}…): "
              + ("it loaded." if st is not None and st.status == "ok" else
                 f"but it did not load: {st.status if st else 'not found'}."),
              {"trusted": a["path"], "sha256": a["sha256"],
               "status": st.status if st else "not found"})
    return None
