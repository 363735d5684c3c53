"""The web for a question: only when the person asks for it, or when the notes have nothing
and a model is configured — and then the reply says so.  It goes through the guarded web
search actuator and the approval policy (a SearXNG-shaped server on loopback)."""

from __future__ import annotations

import http.server
import json
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from opencortex.runtime import Runtime

from ..llm.conftest import FakeLLM

QUESTION = "how tall is the Eiffel tower?"  # the classifier reads it as the web's


class _Search(http.server.BaseHTTPRequestHandler):
    def log_message(self, *a: object) -> None:
        pass

    def do_GET(self) -> None:
        self.server.paths.append(self.path)  # type: ignore[attr-defined]
        body = json.dumps({"results": [{"title": "Eiffel Tower facts",
                                        "url": "https://towers.example/eiffel",
                                        "content": "330 metres to the tip"}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def search() -> Iterator[Any]:
    s = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Search)
    s.paths = []  # type: ignore[attr-defined]
    threading.Thread(target=s.serve_forever, daemon=True).start()
    yield s
    s.shutdown()
    s.server_close()


def _config(search_url: str, model_url: str | None) -> None:
    cfg = Path(os.environ["XDG_CONFIG_HOME"]) / "opencortex" / "config.toml"
    cfg.parent.mkdir(parents=True, exist_ok=True)
    text = f'[web]\nsearch_endpoint = "{search_url}"\n'
    if model_url:
        text += (f'[llm]\nprofile = "small"\n[llm.providers.local]\nbase_url = "{model_url}"\n'
                 'key_required = false\nmodels = { fast = "m", smart = "m" }\ntimeout = 10\n'
                 'max_retries = 0\n')
    cfg.write_text(text, encoding="utf-8")


def _ask(rt: Any, q: str, approve: bool) -> tuple[dict[str, Any], list[str], list[Any]]:
    k = rt.kernel(approval_timeout=30 if approve else 0, record_sessions=False)
    asked: list[Any] = []
    stop = threading.Event()

    def approver() -> None:
        while not stop.wait(0.05):
            for p in k.approvals.pending():
                asked.append(p)
                k.approvals.resolve(p.id, True, by="test")

    t = threading.Thread(target=approver, daemon=True)
    if approve:
        t.start()
    try:
        replies = k.ask_full(q, timeout=120)
    finally:
        stop.set()
        if approve:
            t.join(5)
        k.shutdown()
    final = next(d for _, d in reversed(replies) if isinstance(d, dict) and "intents" in d)
    return final, [x for x, _ in replies], asked


def test_offline_a_question_the_notes_do_not_answer_never_goes_to_the_web(
        memex: Path, tmp_path: Path, search: Any) -> None:
    _config(f"http://127.0.0.1:{search.server_port}", None)
    rt = Runtime.open(memex, tmp_path / "i.db")
    try:
        assert rt.via == "offline"
        rt.memex.sync()
        final, texts, _ = _ask(rt, QUESTION, approve=False)
        assert [i["target"] for i in final["intents"]] == ["notes"], final["intents"]
        assert "nothing in your notes" in final["answer"].lower(), final["answer"]
        assert not any("Needs your approval" in t for t in texts), texts
        # asked for, the web is searched (after the approval the policy asks for)
        final, texts, asked = _ask(rt, "search the web for the height of the Eiffel tower",
                                   approve=True)
        assert [i["target"] for i in final["intents"]] == ["web"]
        assert asked and asked[0].action.tool == "websearch"
        assert any("Web results for" in t and "towers.example" in t for t in texts), texts
        assert not any("Nothing in your notes" in t for t in texts)
    finally:
        rt.close()
    assert len(search.paths) == 1  # only the search the person asked for


def test_with_a_model_the_web_is_consulted_when_the_notes_have_nothing_and_says_so(
        memex: Path, tmp_path: Path, search: Any) -> None:
    model = FakeLLM()
    try:
        _config(f"http://127.0.0.1:{search.server_port}", model.url)
        rt = Runtime.open(memex, tmp_path / "i.db")
        try:
            assert rt.via == "model"
            rt.memex.sync()
            final, texts, asked = _ask(rt, QUESTION, approve=True)
            assert [i["target"] for i in final["intents"]] == ["web"], final["intents"]
            assert asked and asked[0].action.tool == "websearch"  # the approval policy
            reply = next(t for t in texts if "Web results for" in t)
            assert "Nothing in your notes answers that, so I searched the web.\nWeb results " \
                "for 'how tall is the Eiffel tower'" in reply, reply
            assert "towers.example/eiffel" in reply
            # a question the notes answer never reaches the web
            final, texts, asked = _ask(rt, "how many eggs do I crack into the shakshuka?",
                                       approve=True)
            assert [i["target"] for i in final["intents"]] == ["notes"]
            assert not asked and "eggs" in final["answer"]
        finally:
            rt.close()
    finally:
        model.close()
    assert len(search.paths) == 1 and "Eiffel" in search.paths[0]
