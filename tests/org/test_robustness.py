"""Hostile and arbitrary input: never raises, spans stay consistent, bounded time."""

from __future__ import annotations

import time

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from opencortex.org import OrgDocument, parse, parse_bytes, parse_file

ORG_ALPHABET = st.sampled_from(list("* \t\n:#+-|[]<>=~/_^$\\{}()@%.0123456789abcTODOEN\r\x00é"))
org_text = st.lists(
    st.one_of(
        ORG_ALPHABET,
        st.sampled_from([
            "* ", "** TODO ", "\n:PROPERTIES:\n", ":ID: x\n", ":END:\n", "#+begin_src\n",
            "#+end_src\n", "SCHEDULED: <2026-01-01 Thu>\n", "[[a][b]]", "https://x.org ",
            "<<<r>>>", "- ", "| a | b |\n", "#+TODO: A | B\n", "\r\n", "=v=", "[fn::x]",
        ]),
    ),
    max_size=80,
).map("".join)


def check_consistent(doc: OrgDocument) -> None:
    text = doc.text
    n = len(text)
    prev_start = -1
    for i, h in enumerate(doc.headings):
        assert h.index == i
        assert prev_start < h.start
        prev_start = h.start
        assert text[h.start:].startswith("*" * h.stars)
        assert h.start <= h.headline_end <= h.body_start <= h.end <= h.subtree_end <= n
        if h.planning_span:
            assert h.headline_end < h.planning_span[0] < h.planning_span[1] <= h.body_start
        if h.drawer_span:
            assert h.drawer_span[1] <= h.body_start
        if h.parent is not None:
            assert doc.headings[h.parent].stars < h.stars
        for lk in h.links:
            assert 0 <= lk.offset < n
    for a, b in zip(doc.headings, doc.headings[1:], strict=False):
        assert a.end == b.start


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(org_text)
def test_arbitrary_org_like_text(text: str) -> None:
    doc = parse(text)
    check_consistent(doc)
    assert doc.text.encode("utf-8", "surrogateescape").decode("utf-8", "surrogateescape") == text


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=300))
def test_arbitrary_bytes_roundtrip(data: bytes) -> None:
    doc = parse_bytes(data)
    check_consistent(doc)
    assert doc.text.encode("utf-8", "surrogateescape") == data


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=200))
def test_arbitrary_unicode(text: str) -> None:
    check_consistent(parse(text))


def timed(fn, *args):
    t0 = time.perf_counter()
    out = fn(*args)
    return out, time.perf_counter() - t0


def test_invalid_utf8_and_nul_bytes() -> None:
    data = b"* a\n" + bytes(range(256)) * 50 + b"\n* b\x00c\n"
    doc, secs = timed(parse_bytes, data)
    assert secs < 5
    assert [h.title for h in doc.headings][-1] == "b\x00c"
    assert len(doc.errors) == 2


def test_50mb_file(tmp_path) -> None:
    para = ("Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor "
            "incididunt ut labore et dolore magna aliqua. Ut enim ad minim veniam.\n") * 3
    chunk = "".join(
        f"* Heading {i} :tag:\n:PROPERTIES:\n:ID: id-{i}\n:END:\n{para}\n"
        f"- item [[https://example.org/{i}][link]]\n- item two\n\n{para}\n** Sub {i}\n{para}"
        for i in range(200)
    ).encode()
    p = tmp_path / "big.org"
    with open(p, "wb") as fh:
        for _ in range(50_000_000 // len(chunk) + 1):
            fh.write(chunk)
    doc, secs = timed(parse_file, p)
    assert len(doc.headings) > 20_000
    assert secs < 30  # ~5 s on a loaded 2-core box; generous for CI noise


def test_deep_nesting() -> None:
    doc, secs = timed(parse, "*" * 10000 + " x\n")
    assert secs < 5 and doc.headings[0].stars == 10000
    text = "".join("*" * d + f" h{d}\n" for d in range(1, 10001))
    doc, secs = timed(parse, text)
    assert secs < 20
    assert doc.headings[-1].parent == 9998
    assert doc.outline_path(doc.headings[-1])[:2] == ["h1", "h2"]
    assert doc.headings[0].subtree_end == len(text)


def test_deeply_nested_lists_and_blocks() -> None:
    text = "* h\n" + "".join(" " * d + "- item\n" for d in range(3000))
    text += "#+begin_quote\n" * 500 + "[[x]]\n" + "#+end_quote\n" * 500
    doc, secs = timed(parse, text)
    assert secs < 20
    assert [lk.path for lk in doc.headings[0].links] == ["x"]


def test_unterminated_openers_are_linear() -> None:
    body = ":PROPERTIES:\n" + ":LOGBOOK:\n" * 20000 + "#+begin_src\n" * 20000
    body += "\\begin{x}\n" * 20000 + "[[y]]\n"
    doc, secs = timed(parse, "* h\n" + body + "* k\n")
    assert secs < 20
    assert [lk.path for lk in doc.headings[0].links] == ["y"]


def test_pathological_lines() -> None:
    for line in ("[" * 100_000, "*" * 100_000, "=" * 100_000, "*a " * 30_000,
                 "=a= " * 25_000, "[[a" * 30_000, "a_{" * 30_000, "https://" * 12_000,
                 "\\" * 100_000, "<" * 100_000, "~x " * 30_000, "[fn:" * 25_000):
        doc, secs = timed(parse, "* h\n" + line + "\n")
        assert secs < 10, line[:10]
        assert len(doc.headings) == 1
