"""The in-process MiniLM against the 50-text sentence-transformers reference of the dev set
(opt-in: the file lives outside the repository, ``../shared/models/minilm-reference.json``).

The suite checks the one probe shipped in ``opencortex/embed/reference_probe.json``; this
checks every item (empty, truncated at 256 tokens, non-Latin) at cosine >= 0.999 and exits
1 otherwise.

    .venv/bin/python bench/minilm_reference.py [--reference FILE]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reference", type=Path,
                    default=REPO.parent / "shared" / "models" / "minilm-reference.json")
    a = ap.parse_args()
    if not a.reference.is_file():
        print(f"not found: {a.reference} (pass --reference FILE)", file=sys.stderr)
        return 2
    from opencortex.embed.minilm import MiniLMEmbedder

    items = json.loads(a.reference.read_text(encoding="utf-8"))["items"]
    emb = MiniLMEmbedder()
    ref = np.array([it["embedding"] for it in items], dtype=np.float32)
    texts = [it["text"] for it in items]
    got = emb.embed(texts)
    cos = (got * ref).sum(1) / np.linalg.norm(ref, axis=1) / np.linalg.norm(got, axis=1)
    bad = {i: round(float(c), 5) for i, c in enumerate(cos) if c < 0.999}
    print(f"{len(cos)} items, min cosine {cos.min():.6f}, below 0.999: {bad or 'none'}")
    print(f"covers: empty={any(not t.strip() for t in texts)} "
          f"truncated={max(emb.token_counts(texts)) == 256} "
          f"non-latin={any(any(ord(ch) > 0x2FF for ch in t) for t in texts)}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
