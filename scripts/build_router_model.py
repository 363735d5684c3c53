"""Build the router's shipped classifier (src/opencortex/router/data/classifier.npz).

Trains on the bundled utterances (router/classifier.py ``SOURCES``) with the default embedder
(the in-process MiniLM), never from a cache, and writes the file with its key: the data's hash,
the hyperparameters and the embedder.  Run it after changing the training data or the
classifier's hyperparameters (tests/router/test_shipped.py fails until you do):

    .venv/bin/python scripts/build_router_model.py [--out FILE]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from opencortex.embed import get_embedder
from opencortex.router.classifier import SHIPPED_FILE, Classifier, build_shipped
from opencortex.router.decompose import DEFAULT_MODEL_ID


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=SHIPPED_FILE)
    a = ap.parse_args()
    t0 = time.perf_counter()
    clf = build_shipped(get_embedder("minilm").embed, DEFAULT_MODEL_ID, a.out)
    meta = Classifier.meta(a.out)
    print(f"{a.out}: {a.out.stat().st_size} bytes, {len(clf.anchors)} utterances, "
          f"{len(clf.labels)} labels, data sha256 {meta['data_sha256'][:16]}…, key {meta['key']}, "
          f"{time.perf_counter() - t0:.1f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
