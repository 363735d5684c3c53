"""Diary sexps in untrusted text stay words: the agenda evaluates every line matching
``^&?%%(`` of every agenda file (no confirmation), so ``&%%(shell-command …)`` in a capture
ran code the day the person opened their agenda. Emacs's own agenda is the judge."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from opencortex.recall.sources.opencortex_sessions import unescape_block
from opencortex.sessions.recorder import escape_block
from opencortex.write.neutralise import neutralise_body

pytestmark = pytest.mark.sqlite_only("store-independent: the neutraliser and Emacs's agenda")

PAYLOADS = ["&%%(progn (shell-command \"touch {m}\") t)",
            "%%(progn (shell-command \"touch {m}\") t)",
            "&%%(progn (shell-command \"touch {m}\") nil) x",
            "note <%%(progn (shell-command \"touch {m}\") t)>",
            # the agenda evaluates a sexp line inside an example block too
            "#+begin_example\n%%(progn (shell-command \"touch {m}\") t)\n#+end_example",
            "#+begin_example\n,%%(progn (shell-command \"touch {m}\") t)\n#+end_example",
            # an inline diary timestamp inside a block is left verbatim: the agenda skips it
            "#+begin_example\nnote <%%(progn (shell-command \"touch {m}\") t)>\n#+end_example"]


def test_ampersand_diary_sexp_is_escaped() -> None:
    for p in PAYLOADS[:3]:
        out = neutralise_body(p.format(m="/x"))
        assert not out.startswith(("&%%(", "%%(")), out
        assert neutralise_body(out) == out  # idempotent


def test_block_content_escape_of_sexps_round_trips() -> None:
    """Session records keep each turn verbatim in an example block; recall reads it back
    exactly."""
    text = "%%(a)\n&%%(b)\n  ,%%(c)\n* d\nplain %%(e)"
    esc = escape_block(text)
    assert not any(ln.startswith(("%%(", "&%%(")) for ln in esc.split("\n")), esc
    assert unescape_block(esc) == text


@pytest.mark.skipif(shutil.which("emacs") is None, reason="needs Emacs")
def test_agenda_evaluates_no_sexp_from_neutralised_text(tmp_path: Path) -> None:
    control, marker = tmp_path / "control-ran", tmp_path / "ran"
    raw, safe = tmp_path / "raw.org", tmp_path / "inbox.org"
    raw.write_text("* Note\n" + PAYLOADS[0].format(m=control) + "\n", encoding="utf-8")
    safe.write_text("* Note\n" + "\n".join(neutralise_body(p.format(m=marker))
                                            for p in PAYLOADS) + "\n"
                    + "* Session\n#+begin_example\n" + escape_block(
                        PAYLOADS[0].format(m=marker)) + "\n#+end_example\n", encoding="utf-8")
    elisp = ("(progn (require 'org-agenda) (setq org-agenda-files command-line-args-left)"
             " (setq command-line-args-left nil) (org-agenda-list))")
    subprocess.run(["emacs", "-Q", "--batch", "--eval", elisp, str(raw), str(safe)],
                   capture_output=True, timeout=60, check=False)
    assert control.exists()  # control: written as is, the agenda runs it
    assert not marker.exists()
