"""The router's classifier trains once per process at first use (embedding its training set
takes tens of seconds on a loaded machine); train it before the pipeline tests, whose
deadlines measure the pipeline, not that one-time cost. Its own cache stays in a tmp dir."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session", autouse=True)
def _trained_router(tmp_path_factory: pytest.TempPathFactory) -> None:
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("router-cache")))
        try:
            from opencortex.router.decompose import verdict

            verdict("warm up")
        except Exception:  # no embedder installed: the tests that need it say so
            pass
