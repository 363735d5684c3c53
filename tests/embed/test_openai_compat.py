"""The OpenAI-compatible client against a real HTTP server on 127.0.0.1.

The server speaks the OpenAI embeddings protocol and computes real vectors with the
in-process MiniLM, so a round trip is checked value by value; scripted answers cover the
failure modes (5xx, 429, malformed JSON, wrong dimension, timeouts, refused connections).
"""

from __future__ import annotations

import json
import random
import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np
import pytest

from opencortex.embed import Embedder, EmbeddingError, get_embedder
from opencortex.embed.openai_compat import OpenAICompatEmbedder

TEXTS = ["What did I write about spaced repetition?", "Мой конспект", "東京のメモ",
         "* TODO Call Anna", "x " * 300]


class FakeOpenAI(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, embed: Any) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.embed = embed
        self.script: list[dict[str, Any]] = []  # consumed first, one per request
        self.requests: list[dict[str, Any]] = []
        self.lock = threading.Lock()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"


class _Handler(BaseHTTPRequestHandler):
    server: FakeOpenAI

    def log_message(self, *args: object) -> None:  # keep pytest output clean
        pass

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        with self.server.lock:
            self.server.requests.append({"path": self.path, "body": body,
                                         "auth": self.headers.get("Authorization")})
            step = self.server.script.pop(0) if self.server.script else {}
        time.sleep(step.get("delay", 0))
        if self.path != "/v1/embeddings":
            return self._send(404, {"error": {"message": f"no route {self.path}"}})
        if "status" in step:
            return self._send(step["status"], step.get("json", {"error": {"message": "boom"}}),
                              step.get("headers", {}))
        if "raw" in step:
            return self._send(200, None, raw=step["raw"])
        vecs = self.server.embed(body["input"])
        if "dim" in step:
            vecs = np.pad(vecs, ((0, 0), (0, step["dim"] - vecs.shape[1])))
        data = [{"object": "embedding", "index": i, "embedding": [float(x) for x in v]}
                for i, v in enumerate(vecs)]
        data = data[:len(data) - step.get("drop", 0)]
        random.shuffle(data)  # clients must order by index, not by position
        self._send(200, {"object": "list", "data": data, "model": body["model"],
                         "usage": {"prompt_tokens": 1, "total_tokens": 1}})

    def _send(self, status: int, payload: object, headers: dict[str, str] | None = None,
              raw: bytes | None = None) -> None:
        out = raw if raw is not None else json.dumps(payload).encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(out)))
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(out)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (timeout test)


@pytest.fixture
def server(minilm: Any) -> Iterator[FakeOpenAI]:
    srv = FakeOpenAI(minilm.embed)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    try:
        yield srv
    finally:
        srv.shutdown()
        srv.server_close()


@pytest.fixture
def sleeps() -> list[float]:
    return []


def client(server: FakeOpenAI, sleeps: list[float], **kw: Any) -> OpenAICompatEmbedder:
    kw.setdefault("dim", 384)
    return OpenAICompatEmbedder(server.base_url, "all-MiniLM-L6-v2", sleep=sleeps.append, **kw)


def test_round_trip_real_vectors(server: FakeOpenAI, sleeps: list[float], minilm: Any) -> None:
    emb = client(server, sleeps)
    assert isinstance(emb, Embedder)
    got = emb.embed(TEXTS)
    assert got.shape == (len(TEXTS), 384) and got.dtype == np.float32
    assert np.abs(got - minilm.embed(TEXTS)).max() <= 1e-6
    req = server.requests[0]
    assert req["path"] == "/v1/embeddings" and req["body"]["model"] == "all-MiniLM-L6-v2"
    assert req["body"]["input"] == TEXTS and req["auth"] is None and not sleeps


def test_batches_and_order(server: FakeOpenAI, sleeps: list[float], minilm: Any) -> None:
    got = client(server, sleeps).embed(TEXTS, batch_size=2)
    assert [len(r["body"]["input"]) for r in server.requests] == [2, 2, 1]
    assert np.abs(got - minilm.embed(TEXTS)).max() <= 1e-6


def test_bearer_key_from_env(server: FakeOpenAI, sleeps: list[float],
                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_EMBED_KEY", "sk-test")
    client(server, sleeps, api_key_env="MY_EMBED_KEY").embed(["a"])
    assert server.requests[-1]["auth"] == "Bearer sk-test"


def test_normalises_server_vectors(server: FakeOpenAI, sleeps: list[float]) -> None:
    server.embed = lambda texts: np.full((len(texts), 384), 3.0, dtype=np.float32)
    got = client(server, sleeps).embed(["a", "b"])
    assert np.allclose(np.linalg.norm(got, axis=1), 1.0)


def test_500_then_success(server: FakeOpenAI, sleeps: list[float]) -> None:
    server.script = [{"status": 500}]
    assert client(server, sleeps).embed(["a"]).shape == (1, 384)
    assert len(server.requests) == 2 and len(sleeps) == 1


def test_429_honours_retry_after(server: FakeOpenAI, sleeps: list[float]) -> None:
    server.script = [{"status": 429, "headers": {"Retry-After": "0.25"}}, {"status": 503}]
    assert client(server, sleeps).embed(["a"]).shape == (1, 384)
    assert len(server.requests) == 3 and sleeps[0] == 0.25 and 0 < sleeps[1] < 1.5


def test_retries_exhausted(server: FakeOpenAI, sleeps: list[float]) -> None:
    server.script = [{"status": 503, "json": {"error": {"message": "overloaded"}}}] * 3
    with pytest.raises(EmbeddingError, match=r"HTTP 503 \(overloaded\) 3 times"):
        client(server, sleeps, max_retries=2).embed(["a"])
    assert len(server.requests) == 3 and len(sleeps) == 2
    assert sleeps[1] > sleeps[0]  # exponential backoff


def test_client_errors_are_not_retried(server: FakeOpenAI, sleeps: list[float]) -> None:
    server.script = [{"status": 400, "json": {"error": {"message": "input too long"}}}]
    with pytest.raises(EmbeddingError, match=r"HTTP 400 .input too long"):
        client(server, sleeps).embed(["a"])
    assert len(server.requests) == 1


def test_401_names_the_key_variable(server: FakeOpenAI, sleeps: list[float]) -> None:
    server.script = [{"status": 401, "json": {"error": {"message": "bad key"}}}]
    with pytest.raises(EmbeddingError, match=r"set the API key in \$OPENCORTEX_EMBED_API_KEY"):
        client(server, sleeps).embed(["a"])


def test_wrong_path_404(server: FakeOpenAI, sleeps: list[float]) -> None:
    emb = OpenAICompatEmbedder(server.base_url[:-3], "m", dim=384, sleep=sleeps.append)
    with pytest.raises(EmbeddingError, match="usually ends in /v1"):
        emb.embed(["a"])


def test_malformed_json(server: FakeOpenAI, sleeps: list[float]) -> None:
    server.script = [{"raw": b"<html>proxy error</html>"}]
    with pytest.raises(EmbeddingError, match="did not answer like an OpenAI embeddings endpoint"):
        client(server, sleeps).embed(["a"])
    server.script = [{"raw": b'{"data": [{"embedding": [1, 2]}]}'}]  # no index
    with pytest.raises(EmbeddingError, match="did not answer like"):
        client(server, sleeps).embed(["a"])


def test_wrong_dimension(server: FakeOpenAI, sleeps: list[float]) -> None:
    with pytest.raises(EmbeddingError, match=r"returned 384-d embeddings, expected 512"):
        client(server, sleeps, dim=512).embed(["a"])
    emb = client(server, sleeps, dim=None)
    emb.embed(["a"])
    server.script = [{"dim": 400}]  # the server changes its mind mid-index
    with pytest.raises(EmbeddingError, match="returned 400-d embeddings, expected 384"):
        emb.embed(["b"])


def test_missing_rows(server: FakeOpenAI, sleeps: list[float]) -> None:
    server.script = [{"drop": 1}]
    with pytest.raises(EmbeddingError, match=r"returned 2 embeddings .* for 3 inputs"):
        client(server, sleeps).embed(["a", "b", "c"])


def test_dim_is_probed_when_not_configured(server: FakeOpenAI, sleeps: list[float]) -> None:
    emb = client(server, sleeps, dim=None)
    assert emb.dim == 384 and len(server.requests) == 1
    assert emb.embed([]).shape == (0, 384) and len(server.requests) == 1


def test_timeout_is_retried(server: FakeOpenAI, sleeps: list[float]) -> None:
    server.script = [{"delay": 1.0}]
    emb = client(server, sleeps, timeout=0.2, max_retries=1)
    assert emb.embed(["a"]).shape == (1, 384)
    assert len(sleeps) == 1


def test_connection_refused_names_the_url(sleeps: list[float]) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    emb = OpenAICompatEmbedder(f"http://127.0.0.1:{port}/v1", "m", dim=384, sleep=sleeps.append)
    with pytest.raises(EmbeddingError) as err:
        emb.embed(["a"])
    assert f"http://127.0.0.1:{port}/v1/embeddings" in str(err.value)
    assert "OPENCORTEX_EMBEDDER" in str(err.value) and not sleeps


def test_get_embedder_openai_spec(server: FakeOpenAI, minilm: Any,
                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEAM_KEY", "k1")
    emb = get_embedder(f"openai:{server.base_url}#all-MiniLM-L6-v2&dim=384&key_env=TEAM_KEY"
                       "&batch=2&timeout=5&retries=1")
    assert isinstance(emb, OpenAICompatEmbedder)
    assert (emb.name, emb.dim, emb.max_batch, emb.timeout, emb.max_retries) == (
        "all-MiniLM-L6-v2", 384, 2, 5.0, 1)
    got = emb.embed(TEXTS[:3])
    assert np.abs(got - minilm.embed(TEXTS[:3])).max() <= 1e-6
    assert len(server.requests) == 2 and server.requests[0]["auth"] == "Bearer k1"
