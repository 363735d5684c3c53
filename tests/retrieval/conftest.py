from __future__ import annotations

import hashlib
import re

import numpy as np


class HashingEmbedder:
    """A small deterministic bag-of-words embedder: a real implementation of the
    embedder protocol (hashing trick), for testing storage and fusion without a model."""

    def __init__(self, name: str = "hash-test", dim: int = 64) -> None:
        self.name, self.dim = name, dim
        self.calls = 0
        self.texts = 0

    def embed(self, texts, batch_size: int = 32):
        self.calls += 1
        self.texts += len(texts)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, t in enumerate(texts):
            for w in re.findall(r"\w+", t.lower()):
                h = int.from_bytes(hashlib.blake2b(w.encode(), digest_size=4).digest(), "little")
                out[i, h % self.dim] += 1.0
            n = np.linalg.norm(out[i])
            if n:
                out[i] /= n
        return out
