"""Red team (issue 23): private text whose words were respaced, run together, cut a word or
a character per line, or written in other letters reached an HTTP client.

The content check read lines and 8-word shingles only, so a hostile model (one that saw a
private note while answering the person) or a read-only shell command over an unindexed
copy (an Emacs backup ``notes.org~``: no privacy path to follow) could hand a private
passage to a client that may not see it, by changing only what lies *between* its letters:
no spaces, letter-spaced, underscores, a zero-width character after each letter, fullwidth
letters, combining accents, reversed, one word or one character per line (``grep -o``).
And a streamed answer was checked with three lines of context, so a passage written a word
per line streamed whole before the verified reply withheld it.  The letter prints (windows
of letters and digits, everything between them dropped) read all of these as the note."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest

from opencortex.guard.egress import Prints, StreamGate, check

from ..llm.conftest import FakeLLM, Reply, chunk
from . import test_stream_egress as streamed
from .edge_live import daemons, write_config
from .test_egress import CANARY, CANARY_WORD, PRIVATE, _plant
from .test_stream_egress import PUBLIC_LINE, _pieces

llm = streamed.llm  # the hostile streaming model and the daemon it answers through
served = streamed.served


def _letters(s: str) -> str:
    return "".join(c for c in s.casefold() if c.isalnum())


def _fullwidth(s: str) -> str:
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in s)


DISGUISES = {
    "run together": CANARY.replace(" ", ""),
    "letter-spaced": " ".join(CANARY),
    "underscores": CANARY.replace(" ", "_"),
    "zero-width": "\u200b".join(CANARY),
    "soft hyphens": "\u00ad".join(CANARY),
    "fullwidth": _fullwidth(CANARY),
    "accents": "".join(c + "\u0301" for c in CANARY),
    "reversed": CANARY[::-1],
    "word per line": "\n".join(CANARY.split()),
    "char per line": "\n".join(c for c in CANARY if c.isalnum()),
    "dotted": ".".join(CANARY.split()),
}


def _strings(v: Any) -> str:
    """Every string in a JSON value, one per line (as a client reads them, unescaped)."""
    if isinstance(v, str):
        return v
    if isinstance(v, dict):
        return "\n".join(_strings(x) for x in v.values())
    if isinstance(v, list):
        return "\n".join(_strings(x) for x in v)
    return ""


def _leaked(text: str, secret: str = CANARY, n: int = 16) -> bool:
    """Does ``text`` carry ``n`` or more consecutive letters of ``secret`` (either way)?"""
    got, s = _letters(text), _letters(secret)
    return any(s[i:i + n] in got or s[i:i + n][::-1] in got for i in range(len(s) - n + 1))


@pytest.mark.parametrize("disguise", DISGUISES.values(), ids=DISGUISES.keys())
def test_a_private_passage_in_disguise_is_withheld(disguise: str) -> None:
    v = check(f"{PUBLIC_LINE}\nHere it is:\n{disguise}\nThat is all.", Prints.of([PRIVATE]))
    assert v.withheld, disguise
    assert PUBLIC_LINE in v.text and "That is all." in v.text
    assert not _leaked(v.text), v.text


@pytest.mark.parametrize("public", [
    "The lighthouse keeper is a fine novel about the sea; read it every night.",
    "a" * 300,
    "0" * 120 + " " + "1234567890" * 8,
    "=" * 80,
    "The quiet moon every night hums over the harbour; verses are sung by keepers.",
])
def test_public_text_sharing_words_or_runs_passes(public: str) -> None:
    v = check(f"{PUBLIC_LINE}\n{public}\n", Prints.of([PRIVATE]))
    assert not v.withheld and public in v.text


@pytest.mark.parametrize("name", ["word per line", "char per line", "zero-width",
                                  "letter-spaced"])
def test_the_stream_gate_releases_no_passage_cut_over_lines(name: str) -> None:
    sent: list[str] = []
    gate = StreamGate(sent.append, lambda: Prints.of([PRIVATE]))
    for p in _pieces(f"{PUBLIC_LINE}\n{DISGUISES[name]}\nand more after it\n", 4):
        gate.feed(p)
    assert "".join(sent).startswith(PUBLIC_LINE + "\n"), sent
    assert not _leaked("".join(sent)), sent


def test_the_stream_gate_still_streams_public_lines_as_written() -> None:
    sent: list[str] = []
    gate = StreamGate(sent.append, lambda: Prints.of([PRIVATE]))
    text = f"{PUBLIC_LINE}\nA second public line about the harbour and its boats.\nok\n"
    for p in _pieces(text, 4):
        gate.feed(p)
    assert "".join(sent).startswith(text.removesuffix("ok\n")), sent
    assert not gate.stopped


# -- a running daemon -----------------------------------------------------------------------
def _answer(text: str) -> Reply:
    body = json.dumps({"action": "reply", "text": text})
    return Reply(sse=[chunk({"role": "assistant", "content": ""})]
                 + [chunk({"content": p}) for p in _pieces(body, 4)]
                 + [chunk({}, "stop"), "data: [DONE]\n\n"])


def test_http_sse_deltas_of_a_word_per_line_carry_no_passage(served: Any,
                                                             llm: FakeLLM) -> None:
    llm.push(_answer(f"{PUBLIC_LINE}\n{DISGUISES['word per line']}\nThat is all."))
    events = list(served.stream("/v1/chat", {"message": "hi! who are you?", "stream": True}))
    deltas = "".join(json.loads(d)["text"] for e, d in events if e == "delta")
    assert deltas.startswith(PUBLIC_LINE), events
    everything = "\n".join(_strings(json.loads(d)) for _, d in events)
    assert CANARY_WORD not in everything and not _leaked(everything), everything
    assert "withheld" in everything


def test_http_reply_run_together_is_withheld(served: Any, llm: FakeLLM) -> None:
    llm.push(_answer(f"{PUBLIC_LINE}\n{DISGUISES['zero-width']}"))
    st, body, _ = served.request("POST", "/v1/chat", {"message": "hi! who are you?"})
    text = _strings(body)
    assert st == 200 and not _leaked(text), text[:600]
    assert "withheld" in text


@pytest.fixture
def live_factory(tmp_path: Path) -> Any:
    yield from daemons(tmp_path)


def test_grep_one_character_a_line_over_a_backup_copy_never_reaches_http(
        memex: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        live_factory: Any) -> None:
    """An Emacs backup (``keeper.org~``) is no indexed note, so no privacy path leads to
    it; ``grep -o`` prints its letters one per line, which no line or shingle matches."""
    _plant(memex)
    (memex / "keeper.org~").write_text(PRIVATE, encoding="utf-8")
    write_config(tmp_path, monkeypatch, textwrap.dedent("""\
        [guard.tools]
        shell = "allow"
        [guard.shell]
        allow = ["grep"]
        """))
    live = live_factory(memex)
    st, body, _ = live.request("POST", "/v1/chat",
                               {"message": "run grep -o [a-z0-9] keeper.org~"})
    text = _strings(body)
    assert st == 200 and not _leaked(text), text[:800]


# -- provenance: git reads its object store, not the paths it names ---------------------------
@pytest.mark.parametrize("argv", [
    ["git", "show", "HEAD:keeper.org", "gtd.org"],
    ["git", "show", "HEAD:./keeper.org", "--", "gtd.org"],
    ["git", "cat-file", "-p", "0123abcd", "gtd.org"],
])
def test_git_naming_a_public_path_still_reads_the_repository(memex: Path,
                                                             argv: list[str]) -> None:
    """``git show HEAD:keeper.org gtd.org`` prints the private file's bytes while the only
    existing path it names is public; a private note of short lines (a PIN, a door code)
    is below every content print, so only provenance can withhold it."""
    from opencortex.guard.egress import shell_read

    _plant(memex)
    (memex / "gtd.org").write_text("* Inbox\n", encoding="utf-8")
    root = memex.resolve()
    assert shell_read(argv, root, root, frozenset({"keeper.org"}))


def test_git_show_of_a_short_private_file_never_reaches_http(
        memex: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        live_factory: Any) -> None:
    import subprocess

    (memex / "locker.org").write_text("* Locker :private:\ncode 4471-9983\n",
                                      encoding="utf-8")
    (memex / "gtd.org").write_text("* Inbox\n", encoding="utf-8")
    git = ["git", "-c", "user.email=a@b", "-c", "user.name=a", "-C", str(memex)]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "x"], check=True)
    write_config(tmp_path, monkeypatch, textwrap.dedent("""\
        [guard.tools]
        shell = "allow"
        """))
    live = live_factory(memex)
    st, body, _ = live.request("POST", "/v1/chat",
                               {"message": "run git show HEAD:locker.org gtd.org"})
    assert st == 200 and "4471" not in _strings(body), _strings(body)[:600]


# -- provenance: an unindexed copy of a private note (an Emacs backup, an autosave) ----------
LOCKER = "#+FILETAGS: :private:\n* Locker\ncode 4471-9983\n"


@pytest.mark.parametrize("name", ["locker.org~", "#locker.org#", "locker.org.bak",
                                  "sub/.#copy.txt"])
def test_a_named_copy_of_a_private_note_is_read_as_private(memex: Path, name: str) -> None:
    from opencortex.guard.egress import shell_read
    from opencortex.guard.policy import GuardPolicy

    (memex / "locker.org").write_text(LOCKER, encoding="utf-8")
    (memex / name).parent.mkdir(parents=True, exist_ok=True)
    (memex / name).write_text(LOCKER, encoding="utf-8")
    (memex / "gtd.org").write_text("* Inbox\n", encoding="utf-8")
    root = memex.resolve()
    files = frozenset({"locker.org"})
    assert shell_read(["cat", name], root, root, files, GuardPolicy())
    assert shell_read(["cat", "gtd.org"], root, root, files, GuardPolicy()) is None


def test_cat_of_an_emacs_backup_of_a_short_private_note_never_reaches_http(
        memex: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        live_factory: Any) -> None:
    (memex / "locker.org").write_text(LOCKER, encoding="utf-8")
    (memex / "locker.org~").write_text(LOCKER, encoding="utf-8")
    write_config(tmp_path, monkeypatch, textwrap.dedent("""\
        [guard.tools]
        shell = "allow"
        """))
    live = live_factory(memex)
    for msg in ("run cat locker.org~", "run head -n 5 #locker.org#"):
        if "#" in msg:
            (memex / "#locker.org#").write_text(LOCKER, encoding="utf-8")
        st, body, _ = live.request("POST", "/v1/chat", {"message": msg})
        assert st == 200 and "4471" not in _strings(body), _strings(body)[:600]


@pytest.mark.parametrize("pack", ["tgz", "tar", "gz", "bz2", "xz", "tar.xz"])
def test_an_archive_or_compressed_copy_of_a_private_note_is_read_as_private(
        memex: Path, pack: str) -> None:
    """``tar -xzOf backup.tgz`` (tar is read-only with -xO) or ``rg -z`` print what a
    compressed copy holds; its bytes show no tag until unpacked."""
    import bz2
    import gzip
    import io
    import lzma
    import tarfile

    from opencortex.guard.egress import shell_read
    from opencortex.guard.policy import GuardPolicy

    (memex / "locker.org").write_text(LOCKER, encoding="utf-8")
    name = f"backup.{pack}"
    if pack.startswith("tar") or pack == "tgz":
        buf = io.BytesIO()
        mode = {"tgz": "w:gz", "tar": "w", "tar.xz": "w:xz"}[pack]
        with tarfile.open(fileobj=buf, mode=mode) as tf:
            data = LOCKER.encode()
            info = tarfile.TarInfo("notes/locker.org")
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
        (memex / name).write_bytes(buf.getvalue())
    else:
        comp = {"gz": gzip.compress, "bz2": bz2.compress, "xz": lzma.compress}[pack]
        (memex / name).write_bytes(comp(LOCKER.encode()))
    (memex / "public.gz").write_bytes(gzip.compress(b"* Inbox\nbuy milk\n"))
    root = memex.resolve()
    files = frozenset({"locker.org"})
    assert shell_read(["tar", "-xzOf", name], root, root, files, GuardPolicy())
    assert shell_read(["rg", "-z", "code", name], root, root, files, GuardPolicy())
    assert shell_read(["rg", "-z", "milk", "public.gz"], root, root, files,
                      GuardPolicy()) is None
