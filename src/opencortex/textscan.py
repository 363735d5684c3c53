"""Linear scans for parsers of untrusted text.

A regexp such as ``x[^>\\n]*>`` tried at every ``x`` of a line with no ``>`` scans to the
line's end from each one: quadratic in the line.  :func:`next_of` answers "where is the
first of these characters at or after p" with one scan shared by every position before
the answer, so a parser asking at increasing positions of one string pays each
character once.
"""

from __future__ import annotations

import re

__all__ = ["next_of"]

_PATTERNS: dict[str, re.Pattern[str]] = {}
# (chars, id(s)) -> (s, lo, hi): no character of chars in s[lo:hi], and hi is one of them
# (or len(s)); holding s keeps its id from being reused while the entry lives.
_CACHE: dict[tuple[str, int], tuple[str, int, int]] = {}
_CACHE_MAX = 64


def next_of(s: str, p: int, chars: str) -> int:
    """First index >= ``p`` of any character of ``chars`` in ``s`` (``len(s)`` if none).

    Amortised: the answer is remembered for every position between ``p`` and it, so a
    later question in that range costs nothing (correct for any order of questions)."""
    key = (chars, id(s))
    got = _CACHE.get(key)
    if got is not None and got[0] is s and got[1] <= p <= got[2]:
        return got[2]
    pat = _PATTERNS.get(chars)
    if pat is None:
        pat = _PATTERNS[chars] = re.compile("[" + re.escape(chars) + "]")
    m = pat.search(s, p)
    hi = m.start() if m else len(s)
    if len(_CACHE) >= _CACHE_MAX:
        _CACHE.clear()
    _CACHE[key] = (s, p, hi)
    return hi
