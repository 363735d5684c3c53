"""The OpenAI-compatible endpoint keeps the conversation: a follow-up is answered over the
earlier answer's notes, in the same session; an unknown model is OpenAI's 404.  A real
HTTP client against the real app on loopback."""

from __future__ import annotations

from typing import Any

from tests.server.conftest import Live

FIRST = "what do my notes say about the flaky invoice export test?"
FOLLOW = "which of those is from Sam?"


def _ask(live: Live, messages: list[dict[str, str]], **extra: Any) -> str:
    st, body, _ = live.request("POST", "/v1/chat/completions",
                               {"model": "opencortex", "messages": messages, **extra})
    assert st == 200, body
    return str(body["choices"][0]["message"]["content"])


def _sessions(live: Live) -> list[str]:
    root = live.memex.settings.sessions_path  # the agent's records, outside the memex
    return sorted(p.read_text(encoding="utf-8") for p in root.rglob("*openai*.org"))


def test_a_follow_up_is_answered_over_the_earlier_answer(live: Live) -> None:
    first = _ask(live, [{"role": "user", "content": FIRST}])
    assert "projects/flaky-test-investigation.org" in first
    convo = [{"role": "user", "content": FIRST}, {"role": "assistant", "content": first},
             {"role": "user", "content": FOLLOW}]
    second = _ask(live, convo)
    # Sam's items among the earlier answer's notes, not the person note a fresh search
    # for "Sam" ranks first
    assert second.startswith("Of the notes from your question"), second
    assert "person-sam.org" not in second, second
    cited = {ln.split("(")[-1].split(",")[0] for ln in second.splitlines()[1:]
             if ln.startswith("- ")}
    assert cited and all(c.split(":")[0] in first for c in cited), (cited, first)
    # the same conversation is one session: both turns in one record
    records = _sessions(live)
    assert len(records) == 1 and FIRST in records[0] and FOLLOW in records[0], records

    # the same follow-up without the conversation starts afresh (and a new session)
    fresh = _ask(live, [{"role": "user", "content": FOLLOW}])
    assert "Sam" in fresh and not fresh.startswith("Of the notes"), fresh
    assert len(_sessions(live)) == 2


def test_a_third_turn_stays_in_the_session_and_a_fork_does_not(live: Live) -> None:
    first = _ask(live, [{"role": "user", "content": FIRST}])
    turns = [{"role": "user", "content": FIRST}, {"role": "assistant", "content": first},
             {"role": "user", "content": FOLLOW}]
    second = _ask(live, turns)
    # the client re-sends the answers with their spacing changed: still the same session
    third = _ask(live, [*turns, {"role": "assistant", "content": "  " + second + "\n"},
                        {"role": "user", "content": "caching strategies"}])
    assert "caching-strategies.org" in third
    assert len(_sessions(live)) == 1
    # a conversation whose earlier answer was edited is another one
    _ask(live, [{"role": "user", "content": FIRST},
                {"role": "assistant", "content": "something else entirely"},
                {"role": "user", "content": "caching strategies"}])
    assert len(_sessions(live)) == 2


def test_unknown_model_is_openai_404_and_models_lists_the_valid_one(live: Live) -> None:
    st, models, _ = live.request("GET", "/v1/models")
    assert st == 200 and [m["id"] for m in models["data"]] == ["opencortex"]
    st, body, _ = live.request("POST", "/v1/chat/completions",
                               {"model": "gpt-4o", "messages": [{"role": "user",
                                                                 "content": "hi"}]})
    assert st == 404
    err = body["error"]
    assert err["code"] == "model_not_found" and err["param"] == "model"
    assert err["type"] == "invalid_request_error" and "gpt-4o" in err["message"]
    assert "opencortex" in err["message"]
    st, body, _ = live.request("POST", "/v1/chat/completions", {"messages": "hi"})
    assert st == 422 and body["ok"] is False and "messages" in body["error"]


def test_openapi_servers_is_the_address_the_daemon_listens_on(live: Live) -> None:
    """The test daemon runs on a free port (never the default 8765)."""
    assert live.port != 8765
    st, spec, _ = live.request("GET", "/openapi.json")
    assert st == 200 and spec["servers"] == [{"url": f"http://127.0.0.1:{live.port}"}]
    op = spec["paths"]["/v1/chat/completions"]["post"]
    assert op["responses"]["404"]["content"]["application/json"]["schema"]["$ref"] \
        .endswith("/OpenAIError")
