"""Inline Babel in untrusted text stays words: Emacs's org-element finds no inline source
block or inline call in what the neutraliser wrote (both are evaluated on export and by
C-c C-c), and undo never writes outside the memex whatever the journal says."""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
from pathlib import Path

import pytest

from opencortex.guard.errors import UnsafePathError
from opencortex.memex import Memex
from opencortex.write.neutralise import neutralise_body, neutralise_title

PAYLOADS = ["run src_sh{touch /tmp/pwned} now", "SRC_python[:results raw]{1+1}",
            "see call_evil(x=1) here", "Call_evil[:eval yes]()", "a_src_elisp{(kill-emacs)}",
            "(src_sh{id})", "=call_x()= and ~src_sh{id}~ after",
            # Org's word start is not Python's: a letter-like ª or ① before the name
            "ªsrc_python{1}", "①call_f(1)", "- item ⑴src_sh[:results raw]{id}",
            "src_python\xa0{1}", "call_f\u3000(1)",
            # plain elisp: links, export snippets, macro calls
            '<elisp:(with-temp-file "/tmp/x" (insert "x"))>', "see elisp:kill-emacs now",
            "@@html:<script>alert(1)</script>@@", "{{{evil(arg)}}} and {{{date}}}"]

ELISP = """(progn (require 'org) (with-temp-buffer (insert-file-contents (car argv))
 (org-mode) (princ (length (org-element-map (org-element-parse-buffer)
 '(inline-src-block inline-babel-call export-snippet macro link)
 (lambda (o) (and (or (not (eq (org-element-type o) 'link))
                      (member (org-element-property :type o) '("elisp" "shell")))
                  o)))))))"""


def _count(tmp_path: Path, text: str) -> int:
    f = tmp_path / "t.org"
    f.write_text(text)
    out = subprocess.run(["emacs", "--batch", "-Q", "--eval", ELISP, str(f)],
                         capture_output=True, text=True, timeout=60)
    return int(out.stdout.strip())


@pytest.mark.skipif(not shutil.which("emacs"), reason="needs Emacs")
def test_inline_babel_is_found_raw_and_gone_after_neutralising(tmp_path: Path) -> None:
    raw = "* A title\n" + "\n".join(PAYLOADS) + "\n"
    assert _count(tmp_path, raw) >= 10  # the control: Emacs does read these as code
    body = neutralise_body("\n".join(PAYLOADS))
    titles = "\n".join("* " + neutralise_title(p) for p in PAYLOADS)
    assert _count(tmp_path, "* A title\n" + body + "\n" + titles + "\n") == 0
    assert neutralise_body(body) == body  # idempotent


@pytest.mark.sqlite_only("tampers with the SQLite index file's journal directly")
def test_undo_refuses_a_journal_path_outside_the_memex(tmp_path: Path) -> None:
    root = tmp_path / "memex"
    root.mkdir()
    (root / "a.org").write_text("* One\n")
    outside = tmp_path / "outside.org"
    outside.write_text("* Victim\n")
    index = tmp_path / "i.sqlite3"
    m = Memex(root, index=index)
    m.sync()
    m.capture("Two", to="a.org")
    m.close()
    db = sqlite3.connect(index)
    db.execute("UPDATE journal SET path = ?", (str(outside),))
    db.commit()
    db.close()
    m = Memex(root, index=index)
    with pytest.raises(UnsafePathError):
        m.writer.undo()
    m.close()
    assert outside.read_text() == "* Victim\n"
