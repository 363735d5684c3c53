"""regex_cache: a pattern built from the machine's cache is the very pattern re compiles
(CPython's Pattern equality compares flags, text and the compiled program)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from opencortex import regex_cache


@pytest.fixture
def fresh(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty cache dir and no patterns known in this process."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(regex_cache, "_known", None)
    monkeypatch.setattr(regex_cache, "_new", {})
    return tmp_path


PATTERNS = [(r"(?P<n>\d+)\s+(?P<u>days?|weeks?)\b(?!\s+ago)", re.I),
            (r"^(?:what|who)(?:'s|\s+is)\s+(.+?)[?.!]*$", 0),
            (r"(?x) a \s+ (b|c)* # verbose", re.M | re.S),
            (r"[^\W\d_]+(?<=é)", 0)]


def test_a_cached_pattern_is_the_compiled_one(fresh: Path) -> None:
    first = [regex_cache.compile(p, f) for p, f in PATTERNS]
    assert first == [re.compile(p, f) for p, f in PATTERNS]
    regex_cache._save()
    assert list(fresh.glob("opencortex/regex-*.json"))
    regex_cache._known = None  # a new process: every pattern comes from the file
    again = [regex_cache.compile(p, f) for p, f in PATTERNS]
    assert again == first and not regex_cache._new
    m = again[0].search("in 3 Weeks time")
    assert m is not None and m.group("n", "u") == ("3", "Weeks")


def test_a_damaged_cache_compiles_as_re_does(fresh: Path) -> None:
    regex_cache.compile(*PATTERNS[0])
    regex_cache._save()
    (f,) = fresh.glob("opencortex/regex-*.json")
    f.write_bytes(f.read_bytes()[:40])
    regex_cache._known = None
    assert regex_cache.compile(*PATTERNS[0]) == re.compile(*PATTERNS[0])
    # a well-formed file whose program is wrong for its pattern: _sre refuses it
    import json

    p, fl = PATTERNS[1]
    f.write_text(json.dumps([(p, fl, int(fl | re.U), [1, 2, 3], 0, {}, [None])]))
    regex_cache._known = None
    assert regex_cache.compile(p, fl) == re.compile(p, fl)
    # a file of other shapes (not rows, a string where a number goes): compiled afresh
    for junk in ('{"a": 1}', '[["x", "y", 0, [], 0, {}, []]]', '[1, 2]'):
        f.write_text(junk)
        regex_cache._known = None
        assert regex_cache.compile(p, fl) == re.compile(p, fl)


def test_the_phrase_grammars_patterns_are_res() -> None:
    """Every pattern the router and the GTD skill keep is what re.compile makes of it."""
    from opencortex.router import decompose, rules
    from opencortex.skills import gtd_dates, gtd_questions, gtd_slots

    seen = 0
    for mod in (decompose, rules, gtd_dates, gtd_questions, gtd_slots):
        for v in vars(mod).values():
            if isinstance(v, re.Pattern):
                assert v == re.compile(v.pattern, v.flags), v.pattern[:60]
                seen += 1
    assert seen > 50
