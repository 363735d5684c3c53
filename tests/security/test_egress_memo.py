"""The egress check remembers verdicts per set of prints (``Prints._seen``): the same text
checked again gets the same verdict, private text stays withheld, nothing of the text is
kept, and new prints (a refresh) start with nothing remembered."""

from __future__ import annotations

import base64

from opencortex.guard.egress import SEEN_MAX, Prints, check, check_value

SECRET = "The lighthouse keeper hums verses to the quiet moon every single night"
PUBLIC = "Caching strategies: write-through keeps the cache and the store in step."


def test_a_text_checked_again_gets_the_same_verdict() -> None:
    prints = Prints.of([SECRET])
    reply = f"{PUBLIC}\n{SECRET}\nand a public closing line of the reply to the client"
    first = check(reply, prints)
    again = check(reply, prints)
    assert first.withheld and again == first
    assert SECRET not in again.text and PUBLIC in again.text
    # encoded, and inside JSON: withheld every time too
    blob = base64.b64encode(SECRET.encode()).decode()
    for _ in range(3):
        out, cut = check_value({"reply": [PUBLIC, blob]}, prints)
        assert cut and blob not in json_strings(out)


def json_strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in json_strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in json_strings(v)]
    return []


def test_what_is_remembered_holds_no_text_and_is_bounded() -> None:
    prints = Prints.of([SECRET])
    check(f"{SECRET}\n{PUBLIC}", prints)
    for key, hits in prints._seen.items():
        assert isinstance(key, bytes) and len(key) == 16
        assert SECRET.encode() not in key and all(isinstance(i, int) for i in hits)
    for i in range(SEEN_MAX + 5):
        check(f"{PUBLIC} number {i} of many public lines", prints)
    assert len(prints._seen) <= SEEN_MAX


def test_new_prints_remember_nothing_of_the_old() -> None:
    before = Prints.of(["An entirely different private passage about the garden shed plans"])
    assert not check(SECRET, before).withheld  # not private under these prints
    after = Prints.of([SECRET])  # the note became private: a refresh makes new prints
    assert check(SECRET, after).withheld
    assert before == Prints.of(["An entirely different private passage about the garden "
                                "shed plans"])  # the memory is not part of equality
