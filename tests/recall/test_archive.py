"""The transcript archive: a Claude Code and a Codex transcript are archived, their
originals deleted, and recall still finds, opens and cites them from the archived copies
(the receipt says so, the handle still resumes the original session); a second pass
archives nothing (no bytes read or written); the source files are never touched; the
manifest is append-only; retention prunes by age; the daemon's heartbeat archives."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from opencortex.cli import cli
from opencortex.memex import Memex
from opencortex.recall.archive import Archive, transcript_roots
from opencortex.recall.engine import Recall, parse_source

from .test_engine import NOW, _cases, _generator

pytest.importorskip("zstandard")


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    out = tmp_path / "corpus"
    _generator().generate(out, distractors=12, now=NOW)
    return out


def _roots(corpus: Path) -> list[str]:
    return [f"claude-code:{corpus / 'claude'}", f"codex:{corpus / 'codex'}"]


def _engine(corpus: Path, tmp: Path, index: str = "index.sqlite3") -> Recall:
    m = Memex(corpus / "memex", tmp / index)
    return Recall(m, [parse_source(s) for s in _roots(corpus)], defaults=False,
                  state_dir=tmp / "state", gateway=False)


def _target(corpus: Path, cid: str) -> Path:
    loc = _cases(corpus)[cid]["target"]["locator_contains"]
    hits = [p for p in corpus.rglob("*.jsonl") if str(p).endswith(loc)]
    assert len(hits) == 1, loc
    return hits[0]


def _fingerprint(root: Path) -> dict[str, tuple[str, int]]:
    return {str(p): (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns)
            for p in sorted(root.rglob("*")) if p.is_file()}


def test_deleted_transcripts_are_recalled_from_the_archive(corpus: Path, tmp_path: Path):
    engine = _engine(corpus, tmp_path)
    arc = Archive.for_settings(engine.memex.settings)
    roots = transcript_roots(engine)
    assert {r.kind for r in roots} >= {"claude-code", "codex"}
    before = _fingerprint(corpus)
    first = arc.run(roots)
    n_files = len([p for p in (corpus / "claude").rglob("*.jsonl")]) + \
        len(list((corpus / "codex").rglob("rollout-*.jsonl")))
    assert first.archived + first.deduped >= n_files - 1 and first.failed == []
    assert first.bytes_written > 0 and first.bytes_written < first.bytes_read
    assert _fingerprint(corpus) == before  # read-only at the source

    again = arc.run(roots)  # nothing new: nothing read, nothing written, nothing added
    manifest = arc.manifest.read_bytes()
    assert (again.archived, again.deduped, again.bytes_read, again.bytes_written) == (0, 0, 0, 0)
    assert again.unchanged == first.archived + first.deduped
    arc.run(roots)
    assert arc.manifest.read_bytes() == manifest

    engine.refresh(embed=False)  # the index knew the originals before they went
    cc, cx = _target(corpus, "cc-flaky-login"), _target(corpus, "cx-webhook-dupes")
    cc.unlink()
    cx.unlink()
    gone = arc.run(roots)
    assert gone.gone == 2
    assert arc.manifest.read_bytes().startswith(manifest)  # append-only
    st = arc.status()
    assert sorted((g["source"], g["files"]) for g in st["gone"]) == [("claude-code", 1),
                                                                      ("codex", 1)]
    assert st["oldest"] and st["bytes"]["stored"] == st["bytes"]["on_disk"]

    fresh = _engine(corpus, tmp_path, "fresh.sqlite3")  # and an index built after deletion
    for eng in (engine, fresh):
        for cid, path, handle in (("cc-flaky-login", cc, "claude --resume"),
                                  ("cx-webhook-dupes", cx, "codex resume")):
            case = _cases(corpus)[cid]
            rnd = eng.start(case["cue"], now=NOW)
            if rnd.state != "presented":
                rnd = eng.reply(rnd.session, case["added_cue"])
            elif rnd.recognizable["members"][0]["locator"] != str(path):
                # a near miss first (the store's ranking may differ): correct it as a person
                rnd = eng.reply(rnd.session, "no, not that one, " + case["added_cue"])
            assert rnd.state == "presented", rnd.render()
            head = rnd.recognizable["members"][0]
            assert head["locator"] == str(path) and head["opened"], head
            assert handle in head["handle"] and case["target"]["id"] in head["handle"]
            cited = [c for c in rnd.story if c["cite"]["locator"].startswith(str(path))]
            assert cited, rnd.render()
            quals = [q for q in rnd.qualifications if q["locator"] == str(path)]
            assert quals and "archived copy of " + str(path) in quals[0]["finding"]
            assert "the original was deleted on" in quals[0]["finding"]
            assert "archived copy of" in rnd.render()
            kind = "claude-code" if handle.startswith("claude") else "codex"
            turns = [t.text for r in arc.read_records(kind, str(path)) or [] for t in r.turns]
            text = _archived_bytes(arc, path).decode()
            for c in cited:  # the excerpt is in the archived copy (as bytes or as read)
                ex = c["cite"]["excerpt"]
                assert ex in text or json.dumps(ex)[1:-1] in text or \
                    any(ex in t for t in turns), ex
    engine.memex.close()
    fresh.memex.close()


def _archived_bytes(arc: Archive, path: Path) -> bytes:
    e = arc.entries()[str(path)]
    return arc.data(e.sha256)


def test_a_changed_file_is_archived_again_and_copies_dedup(tmp_path: Path):
    src = tmp_path / "claude" / "projects" / "p"
    src.mkdir(parents=True)
    line = {"type": "user", "sessionId": "s1", "timestamp": "2026-11-01T10:00:00Z",
            "message": {"role": "user", "content": "how do I rotate the logs"}}
    a = src / "s1.jsonl"
    a.write_text(json.dumps(line) + "\n")
    shutil.copy(a, src / "s1-copy.jsonl")
    (src / "link.jsonl").symlink_to(a)  # not a regular file: never followed
    arc = Archive(tmp_path / "arc")
    root = parse_source(f"claude-code:{tmp_path / 'claude'}")
    s1 = arc.run([root])
    assert (s1.archived, s1.deduped, s1.not_regular) == (1, 1, 1)
    assert len(list((tmp_path / "arc" / "objects").rglob("*.zst"))) == 1
    with open(a, "a") as f:
        f.write(json.dumps({**line, "message": {"role": "user", "content": "and gzip"}}) + "\n")
    s2 = arc.run([root])
    assert (s2.archived, s2.unchanged) == (1, 1)
    e = arc.entries()[str(a)]
    assert len(e.versions) == 2 and e.size == a.stat().st_size


def test_retention_prunes_by_age(tmp_path: Path):
    src = tmp_path / "codex" / "sessions" / "2025" / "01" / "01"
    src.mkdir(parents=True)
    old, new = src / "rollout-old.jsonl", src / "rollout-new.jsonl"
    old.write_text('{"type":"session_meta","payload":{"id":"old"}}\n')
    new.write_text('{"type":"session_meta","payload":{"id":"new"}}\n')
    year_ago = time.time() - 400 * 86400
    os.utime(old, (year_ago, year_ago))
    arc = Archive(tmp_path / "arc")
    root = parse_source(f"codex:{tmp_path / 'codex'}")
    s = arc.run([root], retention_days=365)
    assert s.pruned == 1
    st = arc.status()
    assert st["files"] == 1 and st["pruned"] == 1 and st["objects"] == 1
    assert len(list((tmp_path / "arc" / "objects").rglob("*.zst"))) == 1
    assert arc.run([root], retention_days=365).archived == 0  # not re-archived either


def test_cli_archive_status_and_doctor(corpus: Path, tmp_path: Path):
    r = CliRunner()
    args = ["--memex", str(corpus / "memex"), "--index", str(tmp_path / "i.sqlite3"),
            "--no-defaults"]
    srcs = [x for s in _roots(corpus) for x in ("--source", s)]
    out = r.invoke(cli, ["archive", *args, *srcs, "--json"])
    assert out.exit_code == 0, out.output
    d = json.loads(out.output)
    assert d["archived"] > 0 and d["status"]["files"] == d["archived"] + d["deduped"]
    out2 = json.loads(r.invoke(cli, ["archive", *args, *srcs, "--json"]).output)
    assert out2["archived"] == 0 and out2["bytes_written"] == 0
    st = r.invoke(cli, ["archive", "--memex", str(corpus / "memex"), "--status"])
    assert st.exit_code == 0 and "files" in st.output and "oldest record" in st.output
    doc = r.invoke(cli, ["doctor", "--memex", str(corpus / "memex"), "--index",
                         str(tmp_path / "i.sqlite3"), "--json"])
    check = next(c for c in json.loads(doc.output)["checks"] if c["check"] == "archive")
    assert check["ok"] and f"{d['status']['files']} files" in check["detail"]


def test_the_heartbeat_archives_in_the_background(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch):
    from opencortex.pipeline.kernel import Kernel

    mx = tmp_path / "memex"
    (mx / "sessions").mkdir(parents=True)
    shutil.copytree(Path(__file__).resolve().parents[2] / "examples" / "memex", mx,
                    dirs_exist_ok=True)
    cfg = tmp_path / "c.toml"
    cfg.write_text('[archive]\ninterval = 3600\n')
    monkeypatch.setenv("OPENCORTEX_CONFIG", str(cfg))
    monkeypatch.setenv("OPENCORTEX_RECALL_SOURCES", f"claude-code:{tmp_path / 'cc'}")
    src = tmp_path / "cc" / "projects" / "p"
    src.mkdir(parents=True)
    (src / "s.jsonl").write_text(json.dumps(
        {"type": "user", "sessionId": "s", "message": {"content": "hello"}}) + "\n")
    m = Memex(mx, tmp_path / "i.sqlite3")
    k = Kernel(m, record_sessions=False)
    k.submit({"payload": {"sensor": "heartbeat", "embed": 0}, "meta": {"source": "t"}})
    assert k.archive_upkeep.done.wait(30)
    assert k.archive_upkeep.summary and k.archive_upkeep.summary.archived >= 1
    arc = Archive.for_settings(m.settings)
    assert str(src / "s.jsonl") in arc.entries()
    # a second beat inside the interval does not run another pass
    k.submit({"payload": {"sensor": "heartbeat", "embed": 0}, "meta": {"source": "t"}})
    assert not k.archive_upkeep.running.is_set()
    k.shutdown()
    m.close()


def test_prune_never_deletes_the_only_copy(tmp_path: Path):
    """Issue 27: past retention, a transcript whose original is gone is the archive's only
    copy: kept (and readable), while an old one whose original exists is pruned."""
    src = tmp_path / "codex" / "sessions" / "2025" / "01" / "01"
    src.mkdir(parents=True)
    gone, kept = src / "rollout-gone.jsonl", src / "rollout-here.jsonl"
    gone.write_text('{"type":"session_meta","payload":{"id":"gone"}}\n')
    kept.write_text('{"type":"session_meta","payload":{"id":"here"}}\n')
    year_ago = time.time() - 400 * 86400
    for f in (gone, kept):
        os.utime(f, (year_ago, year_ago))
    arc = Archive(tmp_path / "arc")
    root = parse_source(f"codex:{tmp_path / 'codex'}")
    assert arc.run([root]).archived == 2
    data = gone.read_bytes()
    gone.unlink()  # the tool cleaned it up: only the archive has it now
    s = arc.run([root], retention_days=365)
    assert (s.pruned, s.kept_only_copy) == (1, 1)
    e = arc.entries()[str(gone)]
    assert e.pruned is None and arc.data(e.sha256) == data
    assert arc.entries()[str(kept)].pruned is not None
    assert len(list((tmp_path / "arc" / "objects").rglob("*.zst"))) == 1
    again = arc.run([root], retention_days=365)  # and on every later pass
    assert (again.pruned, again.kept_only_copy) == (0, 1)
    assert arc.data(arc.entries()[str(gone)].sha256) == data
