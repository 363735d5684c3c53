"""Red team (issue 23, third pass): a private passage in base64 or hex reached a client when
the encoding was only laid out differently.

The decoder reads an encoded run of at least 16 characters on one line (a blob wrapped at
76 columns is joined back), so the same bytes wrapped at 12 columns, written in groups of
four, or hex written a byte at a time (``74 68 65``, ``74:68:65``, a hex dump's rows of 16
bytes) were never decoded, and nothing else read them: the model (or a shell command) that
saw a private note handed it over in a form ``base64 -w 12`` / ``xxd`` produce.  The
letter prints now hold the hex and base64 forms of every private text too, and the letter
windows drop whatever lies between the characters."""

from __future__ import annotations

import base64
import hashlib
import textwrap

import pytest

from opencortex.guard.egress import Prints, check

from .test_egress import CANARY, PRIVATE

RAW = CANARY.encode()
B64 = base64.b64encode(RAW).decode()
HEX = RAW.hex()


def _pairs(h: str, sep: str) -> str:
    return sep.join(h[i:i + 2] for i in range(0, len(h), 2))


WRAPS = {
    "base64 wrapped at 12": "\n".join(textwrap.wrap(B64, 12)),
    "base64 wrapped at 15": "\n".join(textwrap.wrap(B64, 15)),
    "base64 in groups of four": " ".join(B64[i:i + 4] for i in range(0, len(B64), 4)),
    "base64 of a later part, wrapped": "\n".join(
        textwrap.wrap(base64.b64encode(RAW[7:]).decode(), 10)),
    "hex a byte at a time": _pairs(HEX, " "),
    "hex with colons": _pairs(HEX, ":"),
    "hex dump rows": "\n".join(_pairs(HEX[i:i + 32].upper(), " ")
                               for i in range(0, len(HEX), 32)),
    "hex byte escapes": "".join(f"\\x{b:02x}" for b in RAW),
    "hex array": ", ".join(f"0x{b:02X}" for b in RAW),
}


@pytest.mark.parametrize("form", WRAPS.values(), ids=WRAPS.keys())
def test_an_encoded_private_passage_laid_out_differently_is_withheld(form: str) -> None:
    got = check(f"Here you go:\n{form}\nThat is all.", Prints.of([PRIVATE]))
    assert got.withheld, form
    assert got.text.startswith("Here you go:\n") and got.text.endswith("\nThat is all.")


def test_public_hashes_and_blobs_are_not_withheld() -> None:
    """Hex and base64 that encode no private text (commit hashes, a public blob) leave."""
    p = Prints.of([PRIVATE])
    digest = hashlib.sha256(b"a public file").hexdigest()
    blob = base64.b64encode(b"A public line that anyone may read, encoded once.").decode()
    text = (f"commit {digest}\n{_pairs(digest, ' ')}\n"
            + "\n".join(textwrap.wrap(blob, 12)))
    assert not check(text, p).withheld
