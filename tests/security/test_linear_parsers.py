"""Every parser that reads untrusted text runs in (near) linear time on adversarial
input: long runs of each delimiter, at n and 4n characters.  A quadratic parser grows 16x;
the test fails above 6x (the process's CPU time, min of 3 runs, so a busy machine -- other
processes taking the cores -- does not fail it; below 50 ms at 4n nothing is measured).
The slot parser on runs of ``"a "`` was listed here as superlinear from wall-clock times on
a loaded machine (40 ms at 2.5 KB, 1.5 s at 40 KB); in CPU time it is linear (40, 158,
681 ms at 2.5, 10, 40 KB: 4.0x, 4.3x per 4x), so it is no longer exempt.  Findings: the GTD slot parser took 30 s on 8 KB of ``-``; the Org
object parser 10 s on 240 KB of ``[[a][``."""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable

import pytest

from opencortex.errors import OpenCortexError

NOW = dt.datetime(2026, 3, 4, 10, 0)
N = 2500
def _slot(s: str) -> object:
    from opencortex.skills.gtd_slots import parse_clause
    return parse_clause(s, NOW)


def _when(s: str) -> object:
    from opencortex.skills.gtd import parse_when
    from opencortex.skills.gtd_dates import parse_time, resolve_day
    return parse_when(s, NOW), resolve_day(s, NOW), parse_time(s)


def _clauses(s: str) -> object:
    from opencortex.router.rules import split_clauses
    return split_clauses(s)


def _cue(s: str) -> object:
    from opencortex.recall.cue import read_cue
    return read_cue([s], NOW)


def _org(s: str) -> object:
    from opencortex.org.parser import parse
    return parse("* h\n" + s + "\n")


def _shell(s: str) -> object:
    from opencortex.guard.policy import GuardPolicy
    from opencortex.guard.shell import normalise_command
    return normalise_command("echo " + s, GuardPolicy().shell)


def _markdown(s: str) -> object:
    from opencortex.write.markdown_org import model_text_to_org
    return model_text_to_org(s, parent_level=1)


PARSERS: dict[str, Callable[[str], object]] = {
    "slot parser": _slot, "date/time": _when, "clause splitter": _clauses,
    "cue reader": _cue, "Org objects": _org, "shell argv": _shell, "Markdown": _markdown,
}


def _best(fn: Callable[[str], object], s: str) -> float:
    """Best of 3 in CPU seconds of this thread: growth is the parser's work, and wall time on
    a shared machine (CI's two lanes, other jobs) also counts the time it was not running."""
    best = float("inf")
    for _ in range(3):
        t = time.thread_time()
        try:
            fn(s)
        except (OpenCortexError, ValueError):
            pass  # refusing is fine: the time is what counts
        best = min(best, time.thread_time() - t)
        if best < 0.002:
            break  # too fast to matter, and to measure
    return best


KNOWN_SLOW: set[tuple[str, str]] = set()
"""Found superlinear by this sweep and not fixed yet (issue 23 follow-up): each still
runs, and is reported as an expected failure until it is made linear."""

SWEEP = ("-", "[", "]", "[[a][", "[[", "(", "<", "*", "/", "=", ":", ",", ".", "\\", '"',
         "{", "%", "\n", "a ", "and ", "<2026-01-01 ", "[fn:", "src_", "call_", ":tag:",
         "<1-1-1 ", "<%%(", "a/", "aand ")


def _grows(fn: Callable[[str], object], d: str, n: int) -> str | None:
    small = (d * (n // len(d) + 1))[:n]
    big = (d * (4 * n // len(d) + 1))[:4 * n]
    t4 = _best(fn, big)
    if t4 < 0.05:
        return None  # under 50 ms at 4n: nothing worth measuring on a busy machine
    t1 = _best(fn, small)
    if t4 / max(t1, 1e-3) <= 6:
        return None
    t4 = _best(fn, big)  # once more: a busy neighbour, not the parser?
    if t4 / max(t1, 1e-3) <= 6:
        return None
    return f"{d!r}: {t1 * 1000:.1f} ms at {n}, {t4 * 1000:.1f} ms at {4 * n}"


def test_the_two_quadratic_parsers_are_linear() -> None:
    """The findings: ``-`` runs in a chat message (GTD slots), ``[[a][`` in a synced file
    (Org objects), at sizes where the old code took seconds."""
    assert _grows(_slot, "-", 4000) is None
    assert _grows(_org, "[[a][", 40000) is None


@pytest.mark.parametrize(("opener", "run"), [
    ("#+BEGIN_SRC", "#+END_"), ("#+BEGIN: d", "#+END"), (":DRAWER:", ":END:"),
    ("\\begin{a}", "\\end{a}"),
])
def test_org_closing_lines_are_indexed_in_linear_time(opener: str, run: str) -> None:
    """A run of would-be closing markers on one line after an opener: the index of
    closing lines looks at each line once (an unanchored closing-line regexp retried
    at every ``#+END_`` of the run took 25 s on 96 KB)."""
    def fn(s: str) -> object:
        return _org(opener + "\n" + s + " x")
    assert _grows(fn, run, 24000) is None


@pytest.mark.parametrize("run", ["#+k:\n", "#+", "#+CAPTION[", "<<<a>>>\n"])
def test_org_keyword_lines_and_radio_targets_are_scanned_in_linear_time(run: str) -> None:
    """Runs the Org-only scans meet: one "#+KEY:" line after another (the element
    scanner's plain-keyword regexp, once per line), one long "#+..." or "#+CAPTION[" line
    (its look-ahead and key backtrack within the line), and many radio targets (every
    "<<<" listed once, each section tested by bisection)."""
    assert _grows(_org, run, 20000) is None


def test_a_tag_list_that_cannot_end_the_text_is_refused_at_once() -> None:
    """"tag it as aandaand…?": a list word that may hold "and" once made the slot
    parser's regexp try every split of the list (exponential: 1.6 s at 22 words)."""
    assert _best(_slot, "tag it as " + "aand" * 40 + "?") < 0.5


@pytest.mark.parametrize(("name", "delim"), [
    pytest.param(n, d, marks=[pytest.mark.xfail(reason="known superlinear", strict=False)]
                 if (n, d) in KNOWN_SLOW else [])
    for n in sorted(PARSERS) for d in SWEEP])
def test_parser_is_linear_on_a_run_of_the_delimiter(name: str, delim: str) -> None:
    slow = _grows(PARSERS[name], delim, N)
    assert slow is None, f"{name} grows faster than linear: {slow}"
