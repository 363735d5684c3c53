"""One in-process MiniLM per test session: building its graph is the only slow step."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def graph_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("embed-cache")


@pytest.fixture(scope="session")
def minilm(graph_cache: Path):
    from opencortex.embed.minilm import MiniLMEmbedder

    with pytest.MonkeyPatch.context() as mp:  # built here, never the set-up's prebuilt graph
        mp.setattr("opencortex.embed.minilm.install_dir", lambda: graph_cache / "not-installed")
        return MiniLMEmbedder(cache_dir=graph_cache)
