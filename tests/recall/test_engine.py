"""The recall dialogue end to end over a generated past-work corpus (transcripts of five
runtimes, a git history, notes, OpenCortex conversations): the invariants of the issue
— records never change, every excerpt occurs in its opened record, no claim rests on an
index gist or on the person's own words, only an explicit person turn identifies, a
correction of the whole re-reads it, a wider search runs only once admitted — plus the
git span history, the incremental record index, the CLI and a model's phrasing."""

from __future__ import annotations

import datetime as dt
import hashlib
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from opencortex.cli import cli
from opencortex.memex import Memex
from opencortex.recall.engine import Recall, parse_source
from opencortex.recall.sources import SOURCES

from ..conftest import REPO

NOW = dt.datetime(2026, 11, 30, 12, 0, tzinfo=dt.UTC)
SHA = re.compile(r"\b[0-9a-f]{40}\b")


def _generator() -> Any:
    spec = importlib.util.spec_from_file_location("recall_fixtures",
                                                  REPO / "bench" / "recall_fixtures.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    sys.modules["recall_fixtures"] = mod  # its dataclasses need the module registered
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("recall") / "corpus"
    _generator().generate(out, distractors=12, now=NOW)
    return out


def _cases(corpus: Path) -> dict[str, dict]:
    return {c["id"]: c for c in map(json.loads, (corpus / "cases.jsonl").read_text()
                                    .splitlines())}


def _roots(corpus: Path) -> list[str]:
    return [f"claude-code:{corpus / 'claude'}", f"codex:{corpus / 'codex'}",
            f"gemini:{corpus / 'gemini'}", f"aider:{corpus / 'aider'}",
            f"git:{corpus / 'repo'}"]


@pytest.fixture
def engine(corpus: Path, tmp_path: Path):
    m = Memex(corpus / "memex", tmp_path / "index.sqlite3")
    e = Recall(m, [parse_source(s) for s in _roots(corpus)], defaults=False,
               state_dir=tmp_path / "state", gateway=False)
    yield e
    m.close()


def _fingerprint(root: Path) -> dict[str, tuple[str, int]]:
    out = {}
    for p in sorted(root.rglob("*")):
        if p.is_file():
            out[str(p)] = (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns)
    return out


def _in_raw_record(loc: str, excerpt: str) -> bool:
    """Whether ``excerpt`` occurs in the record ``loc`` names, read independently of the
    engine: git objects through `git show`, files as bytes (JSON-escaped too)."""
    m = re.match(r"(.+)@([0-9a-f]{40})", loc)
    if m:
        out = subprocess.run(["git", "-C", m.group(1), "show", "--name-status",
                              m.group(2)], capture_output=True, text=True, check=True).stdout
        return excerpt in out or all(line.strip() in out for line in excerpt.splitlines())
    path = Path(re.sub(r":[\d-]+(?::.*)?$|#.*$", "", loc))
    while not path.is_file() and path != path.parent:
        path = path.parent
    text = path.read_text(encoding="utf-8", errors="replace")
    if excerpt in text or json.dumps(excerpt)[1:-1] in text or \
            excerpt in text.replace("\n,", "\n"):  # Org comma-escaping
        return True
    # a tool call is rendered by its reader ("Read: {...}"): the record as that reader opens it
    return any(excerpt in t.text for src in SOURCES.values() for r in src.read(path)
               for t in r.turns)


def _claims_are_grounded(rnd: Any, utterances: list[str]) -> None:
    handles = {m["handle"] for m in rnd.recognizable["members"] if m["opened"]}
    for c in rnd.story:
        cite = c["cite"]
        assert cite["excerpt"] in c["text"], c
        # the excerpt is in the record itself (not the index's gist of it) ...
        assert _in_raw_record(cite["locator"], cite.get("raw", cite["excerpt"])), c
        # ... and that record is one of the members presented, opened
        assert cite["handle"] in handles, c
        for u in utterances:  # the person's words are cue, never evidence
            assert u not in cite["excerpt"]
        assert cite["handle"]


def test_a_vague_cue_presents_a_grounded_story_and_records_never_change(engine, corpus):
    before = _fingerprint(corpus)
    cases = _cases(corpus)
    presented = 0
    for cid in ("cc-flaky-login", "cx-webhook-dupes", "git-ttl", "nt-backpressure",
                "oc-replication-chapter", "cc-migration-lock-line"):
        c = cases[cid]
        rnd = engine.start(c["cue"], now=NOW)
        assert rnd.state in ("presented", "asked"), rnd.render()
        if rnd.state == "presented":
            presented += 1
            assert rnd.caveat and "still holds" in rnd.caveat
            _claims_are_grounded(rnd, [c["cue"]])
            rnd = engine.reply(rnd.session, "no, not that one, " + c["added_cue"])
        else:
            rnd = engine.reply(rnd.session, c["added_cue"])
        if rnd.state == "presented":
            _claims_are_grounded(rnd, [c["cue"], c["added_cue"]])
            engine.reply(rnd.session, "yes, that one")
    assert presented >= 4
    assert _fingerprint(corpus) == before  # hashes and mtimes: nothing written


def test_the_target_is_presented_with_its_handle(engine, corpus):
    c = _cases(corpus)["cc-flaky-login"]
    rnd = engine.start(c["cue"], now=NOW)
    assert rnd.state == "presented"
    members = rnd.recognizable["members"]
    assert any(c["target"]["locator_contains"] in m["locator"] for m in members)
    head = members[0]
    assert "claude --resume" in head["handle"] and head["opened"]
    assert rnd.searched["window"] is not None  # "a few weeks ago" bounded the search
    assert rnd.adjacent, "adjacent candidates are named so a correction can point at one"


def test_git_records_carry_the_full_commit_hash(engine, corpus):
    c = _cases(corpus)["git-ttl"]
    rnd = engine.start(c["cue"], now=NOW)
    assert rnd.state == "presented"
    head = rnd.recognizable["members"][0]
    assert SHA.search(head["locator"]) and SHA.search(head["handle"])
    assert head["handle"].startswith("git -C ") and " show " in head["handle"]
    assert c["target"]["id"] in head["locator"]


def test_no_claim_cites_the_persons_own_words(engine):
    nonce = "zebraquartz marmalade"
    rnd = engine.start(f"that session where we talked about {nonce} and the flaky login test",
                       now=NOW)
    for c in rnd.story:
        assert "zebraquartz" not in c["cite"]["excerpt"]
        assert "zebraquartz" not in c["text"]


def test_identification_only_from_an_explicit_person_turn(engine, corpus):
    c = _cases(corpus)["cx-webhook-dupes"]
    rnd = engine.start(c["cue"], now=NOW)
    assert rnd.state == "presented"
    sid = rnd.session
    for silence in (None, "", "   "):
        assert engine.reply(sid, silence).state == "holding"
    assert engine.load(sid).state == "open"
    for not_yet in ("hmm, interesting", "maybe that one?",
                    "if that's it, what did we decide?"):
        r = engine.reply(sid, not_yet)
        assert r.state != "identified" and r.recalled is None, not_yet
    r = engine.reply(sid, "yes, that one")
    assert r.state == "identified"
    rc = r.recalled
    assert rc["identified_by"] == "yes, that one" and rc["caveat"]
    assert rc["story"] and rc["excerpts"] == [c["cite"] for c in rc["story"]]
    assert "yes, that one" in rc["text"] and rc["searched"]["text"]
    assert rc["trace"][0]["state"] == "presented" and rc["trace"][0]["cue"] == c["cue"]
    assert rc["trace"][-1] == {"state": "identified", "cue": "yes, that one", "whole": None}
    assert engine.load(sid).state == "identified"
    with pytest.raises(Exception, match="closed"):
        engine.reply(sid, "and another thing")


def test_a_correction_naming_a_different_whole_re_reads_it(engine, corpus):
    c = _cases(corpus)["cc-flaky-login"]
    rnd = engine.start(c["cue"], now=NOW)
    assert rnd.cue["whole"] == "session"
    r2 = engine.reply(rnd.session, "no, I mean the whole line of work on the login test "
                      "across sessions, not one session")
    assert r2.cue["whole"] == "line"
    assert r2.state == "presented" and r2.recognizable["whole"] == "line"
    assert len(r2.recognizable["members"]) > 1 and r2.recognizable["joins"]


def test_the_wider_search_runs_only_once_admitted(engine, corpus):
    c = _cases(corpus)["cc-flaky-login"]  # happened about three weeks before NOW
    rnd = engine.start("yesterday we sorted out the login test that kept failing randomly",
                       now=NOW)
    target = c["target"]["locator_contains"]

    def shown(r: Any) -> bool:
        return r.recognizable is not None and any(
            target in m["locator"] for m in r.recognizable["members"])

    assert not shown(rnd) and rnd.searched["records_outside_window"] > 0
    if rnd.state == "asked":
        assert rnd.question and rnd.expansion is None  # one open question first
        rnd = engine.reply(rnd.session, "we ended up ripping out the retry thing")
    while rnd.state == "presented":  # the near misses the window holds
        assert not shown(rnd)
        rnd = engine.reply(rnd.session, "no, not that, the retry thing got removed")
    assert rnd.state == "offered", rnd.render()
    assert "yesterday" in rnd.expansion["reach"] and "records" in rnd.expansion["cost"]
    assert engine.load(rnd.session).admitted == []
    wider = engine.reply(rnd.session, "yes, go ahead")
    assert wider.state == "presented", wider.render()
    assert shown(wider) or any(target in a["locator"] for a in wider.adjacent)
    assert wider.searched["window"] is None and wider.searched["admitted"]


def test_declining_the_wider_search_stops(engine):
    rnd = engine.start("yesterday we sorted out the login test that kept failing randomly",
                       now=NOW)
    for _ in range(4):
        if rnd.state == "offered":
            break
        rnd = engine.reply(rnd.session, "no, not that, the retry thing got removed")
    assert rnd.state == "offered"
    stop = engine.reply(rnd.session, "no")
    assert stop.state == "stopped" and stop.searched["text"]


def test_not_activated_without_an_empty_intention(engine):
    rnd = engine.start("what's the weather in Paris", invoked=False, now=NOW)
    assert rnd.state == "not_activated" and "empty intention" in rnd.reason
    assert not (engine.state_dir / f"{rnd.session}.json").exists()
    assert engine.start("I vaguely remember we fixed a flaky login test", invoked=False,
                        now=NOW).state in ("presented", "asked")


def test_bare_invocation_asks_one_open_question(engine):
    rnd = engine.start("/recollect", now=NOW)
    assert rnd.state == "asked" and rnd.question and rnd.expansion is None


def test_capture_receipts_qualify_the_scope(engine, corpus):
    broken = next(iter(json.loads((corpus / "corpus.json").read_text())
                       ["deliberately_skipped_lines"]))
    rnd = engine.start("something about zebraquartz marmalade", now=NOW)
    assert rnd.state == "asked"
    q = [x for x in rnd.qualifications if broken in x["locator"]]
    assert q and q[0]["scan"]["skipped_lines"] == 1 and "failed to parse" in q[0]["finding"]


def test_span_history_through_git_log_L(engine, corpus):
    rnd = engine.start("a while ago we changed how PriceCache in pricing/cache.py passes the "
                       "TTL to redis", now=NOW)
    assert rnd.state == "presented"
    hist = [m for m in rnd.recognizable["members"] if " log " in m["handle"] and " -L:" in m["handle"]]
    assert hist and hist[0]["opened"], rnd.recognizable
    assert any("history of" in c["text"] for c in rnd.story)


def test_the_record_index_is_incremental(corpus, tmp_path):
    work = tmp_path / "c"
    shutil.copytree(corpus, work, symlinks=True)
    m = Memex(work / "memex", tmp_path / "i.sqlite3")
    roots = [parse_source(s) for s in _roots(work)]
    e = Recall(m, roots, defaults=False, state_dir=tmp_path / "s", gateway=False)
    first = e.refresh(embed=False)
    assert first.files_read > 20 and first.commits_added >= 10
    again = e.refresh(embed=False)
    assert (again.files_read, again.commits_added, again.removed) == (0, 0, 0)
    session = next((work / "codex").rglob("*.jsonl"))
    with session.open("a") as f:
        f.write('{"timestamp": "2026-11-29T10:00:00Z", "type": "event_msg", '
                '"payload": {"type": "agent_message", "message": "later"}}\n')
    env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@x",
               GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@x")
    (work / "repo" / "NEW.md").write_text("new\n")
    subprocess.run(["git", "-C", str(work / "repo"), "add", "NEW.md"], check=True, env=env)
    subprocess.run(["git", "-C", str(work / "repo"), "commit", "-qm", "docs: new"],
                   check=True, env=env)
    third = e.refresh(embed=False)
    assert (third.files_read, third.commits_added) == (1, 1)
    (work / "aider" / next(p.name for p in (work / "aider").iterdir())
     / ".aider.chat.history.md").unlink()
    assert e.refresh(embed=False).removed == 1
    m.close()


def test_cli_round_trip_and_state_under_xdg(corpus, tmp_path):
    c = _cases(corpus)["cx-webhook-dupes"]
    args = ["recall", c["cue"], "--memex", str(corpus / "memex"), "--index",
            str(tmp_path / "i.sqlite3"), "--no-defaults", "--now", NOW.isoformat(), "--json"]
    for s in _roots(corpus):
        args += ["--source", s]
    r = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert r.exit_code == 0, r.output
    first = json.loads(r.output)
    assert first["state"] == "presented" and set(first) >= {
        "session", "state", "cue", "recognizable", "story", "adjacent", "qualifications",
        "searched", "question", "expansion", "recalled"}
    state = Path(os.environ["XDG_STATE_HOME"]) / "opencortex" / "recall" / \
        f"{first['session']}.json"
    assert state.is_file()
    r = CliRunner().invoke(cli, ["recall", "--session", first["session"], "--reply",
                                 "yes, that one", "--memex", str(corpus / "memex"), "--index",
                                 str(tmp_path / "i.sqlite3"), "--no-defaults", "--json"])
    second = json.loads(r.output)
    assert second["state"] == "identified" and second["recalled"]["identified_by"]
    bad = CliRunner().invoke(cli, ["recall", "x", "--source", "nosuch:/tmp", "--json",
                                   "--memex", str(corpus / "memex")])
    assert bad.exit_code != 0 and "KIND:PATH" in bad.output


def test_a_model_phrases_but_unsupported_claims_are_dropped(corpus, tmp_path):
    from ..llm.conftest import FakeLLM, Reply, completion

    server = FakeLLM()
    try:
        from opencortex.llm import Gateway, Provider

        gw = Gateway([Provider("test", server.url, {"fast": "m", "smart": "m"},
                               key_required=False, local=True, max_retries=0, timeout=5)])
        m = Memex(corpus / "memex", tmp_path / "i.sqlite3")
        e = Recall(m, [parse_source(s) for s in _roots(corpus)], defaults=False,
                   state_dir=tmp_path / "s", gateway=gw)
        e.refresh()  # every gist embedded: both passes below see the same index
        c = _cases(corpus)["cx-webhook-dupes"]
        cue_reply = Reply(body=completion(json.dumps({"whole": "session",
                                                      "terms": ["duplicate"]})))
        # a model that cannot phrase leaves the offline story standing
        server.push(cue_reply, Reply(body=completion("this is not JSON")))
        offline = e.start(c["cue"], now=NOW)
        assert offline.state == "presented" and offline.story
        first = offline.story[0]["cite"]["excerpt"]
        server.push(
            cue_reply,
            Reply(body=completion(json.dumps({"claims": [
                {"cite": 0, "text": f"The session quotes “{first}”."},
                {"cite": 0, "text": "The person decided to rewrite everything in Rust."},
                {"cite": 99, "text": "A claim citing nothing that was opened."}]}))))
        rnd = e.start(c["cue"], now=NOW)
        assert rnd.state == "presented"
        assert [s["text"] for s in rnd.story] == [f"The session quotes “{first}”."]
        assert rnd.story[0]["phrased_by"] == "model"
        assert rnd.searched["model_claims_dropped"] == 2
        assert any(a["kind"] == "synonym" and a["value"] == "duplicate"
                   for a in rnd.cue["axes"])
        m.close()
    finally:
        server.close()
