"""git, parsed as git parses it: global options, then a subcommand and its own options.

Only the subcommands listed here are read-only, and only with the options listed for them
(git's parse-options accepts unique prefixes, so ``--outp`` is ``--output``; see argspec).
Global options are matched exactly, as git.c does.  ``-c``/``--config-env``/``--exec-path``
and the options that name a program (``--upload-pack``, ``--receive-pack``, ``--exec``,
``--open-files-in-pager``, ``-u`` of clone/ls-remote, ``-x`` of rebase) are refused even for
subcommands that are not read-only anyway, abbreviated or not.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from .argspec import Finding, Grammar, Parsed, grammar, parse

__all__ = ["EXEC_LONG", "GIT_SUBCOMMANDS", "classify_git", "git_grammars"]

_RUNS = "makes git run the program it names"
EXEC_LONG = ("upload-pack", "receive-pack", "exec", "exec-path", "open-files-in-pager",
             "config-env", "template", "extcmd", "ext-diff", "textconv", "tool",
             "gpg-program")
"""Long options (of any git subcommand) that run a program: refused in every spelling."""
_EXEC_SHORT = {"clone": "uc", "ls-remote": "u", "rebase": "x", "grep": "O",
               "archive": "", "fetch": "", "pull": "", "push": ""}
_DENY_SUB = {
    "filter-branch": "runs shell snippets on every commit", "difftool": "runs a diff tool",
    "mergetool": "runs a merge tool", "instaweb": "starts a web server and browser",
    "daemon": "serves the repository on the network", "web--browse": "opens a browser",
    "credential": "reads or stores credentials", "credential-store": "stores credentials",
}
_GLOBAL_FLAGS = frozenset(
    "-P --no-pager --no-replace-objects --bare --literal-pathspecs --glob-pathspecs "
    "--noglob-pathspecs --icase-pathspecs --no-optional-locks --html-path --man-path "
    "--info-path --no-lazy-fetch --no-advice --version".split())
_GLOBAL_VALUE = frozenset("-C --git-dir --work-tree --namespace --list-cmds --attr-source"
                          .split())

_DIFF = (
    "-p -u --patch -s --no-patch --raw --patch-with-raw --patch-with-stat --stat? "
    "--compact-summary --numstat --shortstat --dirstat? --cumulative --summary --name-only "
    "--name-status --submodule? --color? --no-color --color-moved? --no-color-moved "
    "--color-moved-ws= --no-color-moved-ws --word-diff? --word-diff-regex= --color-words? "
    "--no-renames --rename-empty --no-rename-empty --check --full-index --binary --abbrev? "
    "--no-abbrev -B? --break-rewrites? -M? --find-renames? -C? --find-copies? "
    "--find-copies-harder -D --irreversible-delete -l= --diff-filter= -S= -G= "
    "--find-object= --pickaxe-all --pickaxe-regex -O= --skip-to= --rotate-to= -R "
    "--relative? --no-relative -a --text --ignore-cr-at-eol --ignore-space-at-eol -b "
    "--ignore-space-change -w --ignore-all-space --ignore-blank-lines -I= "
    "--ignore-matching-lines= --inter-hunk-context= -W --function-context "
    "--no-function-context --exit-code --quiet --no-ext-diff --no-textconv "
    "--ignore-submodules? --src-prefix= --dst-prefix= --no-prefix --default-prefix "
    "--line-prefix= --ita-invisible-in-index --ita-visible-in-index -U= --unified= "
    "--output-indicator-new= --output-indicator-old= --output-indicator-context= "
    "--indent-heuristic --no-indent-heuristic --minimal --patience --histogram "
    "--anchored= --diff-algorithm= --stat-width= --stat-name-width= --stat-count= "
    "--stat-graph-width= -z --no-stat ")
_DIFF_ASK = {"--output=": "writes the diff into the file it names, outside the journal"}
_DIFF_DENY = {"--ext-diff": "runs the external diff program from the git configuration",
              "--textconv": "runs the textconv programs from the git configuration"}
_REV = (
    "-n= --max-count= --skip= --since= --after= --until= --before= --since-as-filter= "
    "--author= --committer= --grep= --grep-reflog= --all-match --invert-grep -i "
    "--regexp-ignore-case --basic-regexp -E --extended-regexp -F --fixed-strings -P "
    "--perl-regexp --merges --no-merges --min-parents= --max-parents= --no-min-parents "
    "--no-max-parents --first-parent --exclude-first-parent-only --not --all --branches? "
    "--tags? --remotes? --glob= --exclude= --reflog --single-worktree "
    "--ignore-missing --bisect --stdin --cherry-mark --cherry-pick --left-only "
    "--right-only --cherry -g --walk-reflogs --merge --boundary --simplify-by-decoration "
    "--show-pulls --full-history --dense --sparse --simplify-merges --ancestry-path? "
    "--date-order --author-date-order --topo-order --reverse --no-walk? --do-walk "
    "--format= --pretty? --abbrev-commit --no-abbrev-commit --oneline --encoding= "
    "--expand-tabs? --no-expand-tabs --notes? --no-notes --show-notes? --standard-notes "
    "--no-standard-notes --relative-date --date= --parents --children --left-right "
    "--graph --no-graph --show-linear-break? --follow --decorate? --no-decorate "
    "--decorate-refs= --decorate-refs-exclude= --clear-decorations --source --mailmap "
    "--no-mailmap --use-mailmap --no-use-mailmap --full-diff --log-size -L= -c --cc -m "
    "--diff-merges= --no-diff-merges --combined-all-paths -t --remerge-diff --count "
    "--no-show-signature ")
_REV_ASK = {"--show-signature": "runs gpg to verify signatures",
            "--alternate-refs": "runs core.alternateRefsCommand from the git configuration"}


def _g(name: str, ro: str, ask: dict[str, str] | None = None,
       deny: dict[str, str] | None = None, **kw: bool) -> Grammar:
    return grammar(f"git {name}", ro, ask=ask, deny=deny, **kw)


def _log(name: str, extra: str = "") -> Grammar:
    return _g(name, _DIFF + _REV + extra, {**_DIFF_ASK, **_REV_ASK}, _DIFF_DENY,
              numeric=True)


@functools.cache
def git_grammars() -> dict[str, Grammar]:
    """The tables, built on first use (keeps importing the guard cheap)."""
    return _build()


def _build() -> dict[str, Grammar]:
    log = _log("log")
    return {
    "log": log, "show": _log("show"), "whatchanged": _log("whatchanged"),
    "rev-list": _log("rev-list", "--objects --objects-edge --no-object-names --quiet "
                     "--disk-usage? --header --timestamp --use-bitmap-index "),
    "shortlog": _log("shortlog", "-n --numbered -s --summary -e --email -c --committer -w? "
                     "--group= "),
    "diff": _g("diff", _DIFF + "--cached --staged --merge-base --no-index -1 -2 -3 "
               "--base --ours --theirs -0", _DIFF_ASK, _DIFF_DENY),
    "diff-tree": _g("diff-tree", _DIFF + "-r -t --root --stdin -m -s -v --no-commit-id "
                    "-c --cc --combined-all-paths --always --merge-base --pretty? "
                    "--format= ", _DIFF_ASK, _DIFF_DENY),
    "diff-index": _g("diff-index", _DIFF + "--cached -m --merge-base ", _DIFF_ASK,
                     _DIFF_DENY),
    "diff-files": _g("diff-files", _DIFF + "-q -0 -1 -2 -3 --base --ours --theirs -c --cc",
                     _DIFF_ASK, _DIFF_DENY),
    "status": _g("status", "-s --short -b --branch --show-stash --porcelain? --long -v "
                 "--verbose -u? --untracked-files? --ignore-submodules? --ignored? -z "
                 "--column? --no-column --ahead-behind --no-ahead-behind --renames "
                 "--no-renames --find-renames? --no-optional-locks"),
    "grep": _g("grep", (
        "--cached --untracked --no-index --no-exclude-standard --exclude-standard "
        "--recurse-submodules -a --text --no-textconv -i --ignore-case -I --max-depth= -r "
        "--recursive --no-recursive -w --word-regexp -v --invert-match -h -H --full-name "
        "-E --extended-regexp -G --basic-regexp -P --perl-regexp -F --fixed-strings -n "
        "--line-number --column -l --files-with-matches --name-only -L "
        "--files-without-match -z --null -o --only-matching -c --count --color? "
        "--no-color --break --heading -p --show-function -A= --after-context= -B= "
        "--before-context= -C= --context= -W --function-context -m= --max-count= "
        "--threads= -f= -e= --and --or --not --all-match -q --quiet"),
        {}, {"-O? --open-files-in-pager?": "opens the matching files in the program it "
             "names (or the pager)", "--textconv": _DIFF_DENY["--textconv"]}, numeric=True),
    "blame": _g("blame", (
        "-b --root --show-stats -L= -l -t -S= --reverse= --first-parent -p --porcelain "
        "--line-porcelain --incremental --encoding= --contents= --date= --progress "
        "--no-progress -M? -C? --ignore-rev= --ignore-revs-file= --color-lines "
        "--color-by-age --minimal -h -c --score-debug -f --show-name -n --show-number -s "
        "-e --show-email -w --abbrev? --no-textconv"), {}, {"--textconv":
                                                         _DIFF_DENY["--textconv"]}),
    "ls-files": _g("ls-files", (
        "-c --cached -d --deleted -m --modified -o --others -i --ignored -s --stage -u "
        "--unmerged -k --killed -z -t -v -f -x= --exclude= -X= --exclude-from= "
        "--exclude-per-directory= --exclude-standard --error-unmatch --with-tree= "
        "--full-name --recurse-submodules --abbrev? --debug --eol --deduplicate "
        "--directory --no-empty-directory --format= --sparse")),
    "ls-tree": _g("ls-tree", "-d -r -t -l --long -z --name-only --name-status "
                  "--object-only --full-name --full-tree --abbrev? --format="),
    "rev-parse": _g("rev-parse", (
        "--parseopt --sq-quote --keep-dashdash --stop-at-non-option --stuck-long "
        "--revs-only --no-revs --flags --no-flags --default= --prefix= --verify -q --quiet "
        "--sq --short? --not --abbrev-ref? --symbolic --symbolic-full-name --all "
        "--branches? --tags? --remotes? --glob= --exclude= --disambiguate= --local-env-vars "
        "--path-format= --git-dir --git-common-dir --resolve-git-dir= --git-path= "
        "--show-toplevel --show-superproject-working-tree --shared-index-path "
        "--absolute-git-dir --is-inside-git-dir --is-inside-work-tree --is-bare-repository "
        "--is-shallow-repository --show-cdup --show-prefix --show-object-format? "
        "--show-ref-format --since= --after= --until= --before= --end-of-options"),
        abbrev=False),
    "describe": _g("describe", "--all --tags --contains --abbrev= --candidates= "
                   "--exact-match --debug --long --match= --exclude= --always "
                   "--first-parent --dirty? --broken?"),
    "cat-file": _g("cat-file", "-t -s -e -p --batch? --batch-check? --follow-symlinks "
                   "--buffer --unordered --allow-unknown-type -Z -z --batch-all-objects",
                   {}, {"--textconv --filters": "runs the textconv/filter programs from the "
                        "git configuration"}),
    "for-each-ref": _g("for-each-ref", "--format= --sort= --count= --points-at= --merged? "
                       "--no-merged? --contains? --no-contains? --shell --perl --python "
                       "--tcl --color? --ignore-case --omit-empty --exclude= --stdin"),
    "show-ref": _g("show-ref", "--head --heads --tags --branches -d --dereference -s "
                   "--hash? --verify --abbrev? -q --quiet --exclude-existing? --exists"),
    "merge-base": _g("merge-base", "-a --all --octopus --independent --is-ancestor "
                     "--fork-point"),
    "name-rev": _g("name-rev", "--tags --refs= --exclude= --all --annotate-stdin --stdin "
                   "--name-only --no-undefined --always"),
    "count-objects": _g("count-objects", "-v --verbose -H --human-readable"),
    "check-ignore": _g("check-ignore", "-q --quiet -v --verbose -n --non-matching -z "
                       "--stdin --no-index"),
    "check-attr": _g("check-attr", "-a --all --cached --stdin -z --source="),
    "version": _g("version", "--build-options"),
    "branch": _g("branch", "-a --all -r --remotes -v --verbose --list -l --contains? "
                 "--no-contains? --merged? --no-merged? --points-at= --sort= --format= "
                 "--color? --no-color --column? --no-column --show-current -i "
                 "--ignore-case --abbrev= --no-abbrev --omit-empty"),
    "tag": _g("tag", "-l --list -n? --contains? --no-contains? --merged? --no-merged? "
              "--points-at= --sort= --format= --color? --column? --no-column -i "
              "--ignore-case --omit-empty"),
    "stash-list": _log("stash list"),
    "stash-show": _g("stash show", _DIFF + "--include-untracked --only-untracked -u",
                     _DIFF_ASK, _DIFF_DENY),
    "remote": _g("remote", "-v --verbose"),
    "remote-get-url": _g("remote get-url", "--push --all"),
    "worktree-list": _g("worktree list", "--porcelain -v --verbose --expire= -z"),
    "config": _g("config", (
        "--get --get-all --get-regexp --get-urlmatch --list -l --global --system --local "
        "--worktree -f= --file= --blob= --show-origin --show-scope -z --null --name-only "
        "--type= --bool --int --bool-or-int --path --expiry-date --no-type --default= "
        "--includes --no-includes --fixed-value --all --regexp --value= --show-names "
        "--url="),
        {"--add --replace-all --unset --unset-all --rename-section --remove-section "
         "--get-color --get-colorbool": "changes the git configuration, whose settings "
         "(core.fsmonitor, core.pager, alias.*) can run programs later",
         "-e --edit": "opens an editor"}),
    }
GIT_SUBCOMMANDS = frozenset(["log", "show", "whatchanged", "rev-list", "shortlog", "diff",
                             "diff-tree", "diff-index", "diff-files", "status", "grep",
                             "blame", "ls-files", "ls-tree", "rev-parse", "describe",
                             "cat-file", "for-each-ref", "show-ref", "merge-base",
                             "name-rev", "count-objects", "check-ignore", "check-attr",
                             "version", "branch", "tag", "stash", "remote", "worktree",
                             "config", "reflog"])
"""Subcommands with a read-only form (some only with certain arguments)."""


def classify_git(args: list[str]) -> list[Finding]:
    """Findings against read-only for ``git args``."""
    out: list[Finding] = []
    for a in args:
        if a.startswith("ext::") or "=ext::" in a:
            out.append(Finding("deny", f"git {a}: the ext:: transport runs a command"))
    i = 0
    while i < len(args) and args[i].startswith("-"):
        a = args[i]
        name, eq, _ = a.partition("=")
        i += 1
        if a in _GLOBAL_FLAGS:
            continue
        if a == "-c" or name == "--config-env":
            out.append(Finding("deny", f"git {a}: sets configuration for this run, and "
                               "settings such as core.pager, alias.* or core.fsmonitor run "
                               "programs"))
            i += 0 if eq else 1
        elif name == "--exec-path":
            out.append(Finding("deny", f"git {a}: {_RUNS}"))
        elif name in _GLOBAL_VALUE:
            i += 0 if eq else 1
        elif a in ("-p", "--paginate"):
            out.append(Finding("ask", f"git {a}: opens a pager"))
        elif a in ("-h", "--help"):
            out.append(Finding("ask", f"git {a}: opens the manual in a pager or browser"))
        else:
            out.append(Finding("ask", f"git {a}: not a git option known to be read-only"))
            _exec_scan("", [a], out)
    if i >= len(args):
        return out
    sub, rest = args[i], args[i + 1:]
    for a in rest:
        if "%G" in a:
            out.append(Finding("ask", f"git {sub} {a}: the %G placeholders run gpg to verify "
                               "signatures"))
            break
    if sub in _DENY_SUB:
        return [*out, Finding("deny", f"git {sub}: {_DENY_SUB[sub]}")]
    handler = _HANDLERS.get(sub)
    if handler is not None:
        return out + handler(rest)
    g = git_grammars().get(sub)
    if g is None:
        out.append(Finding("ask", f"git {sub}: not a git subcommand known to be read-only "
                           "(it may write, reach the network, or be an alias)"))
        _exec_scan(sub, rest, out)
        return out
    p = parse(rest, g)
    return out + p.findings


def _exec_scan(sub: str, args: list[str], out: list[Finding]) -> None:
    """Refuse options that run a program, for subcommands without a table, by prefix."""
    letters = _EXEC_SHORT.get(sub, "")
    for a in args:
        if a == "--":
            break
        if a.startswith("--") and len(a) > 2:
            name = a[2:].partition("=")[0]
            hit = [e for e in EXEC_LONG if e.startswith(name)]
            if hit and not name.startswith("no-"):
                out.append(Finding("deny", f"git {sub} {a}: " + (
                    f"an abbreviation of --{hit[0]}, which " if name != hit[0] else "")
                    + _RUNS))
        elif a.startswith("-") and not a.startswith("--") and letters:
            bad = [c for c in a[1:] if c in letters]
            if bad:
                out.append(Finding("deny", f"git {sub} -{bad[0]} (in {a}): {_RUNS}"))
        if sub == "submodule" and a == "foreach":
            out.append(Finding("deny", "git submodule foreach: runs a command in every "
                               "submodule"))
        if sub == "bisect" and a == "run":
            out.append(Finding("deny", "git bisect run: runs a command on every step"))


def _parse_as(key: str, args: list[str]) -> Parsed:
    return parse(args, git_grammars()[key])


def _listing(sub: str, flags: tuple[str, ...]) -> Callable[[list[str]], list[Finding]]:
    """branch/tag: read-only when listing (no operands, or operands are --list patterns)."""
    def check(args: list[str]) -> list[Finding]:
        p = _parse_as(sub, args)
        if p.operands and not p.has(*flags):
            p.findings.append(Finding("ask", f"git {sub} {p.operands[0]}: creates or changes "
                                      f"a {sub} (only listing is read-only)"))
        return p.findings
    return check


def _stash(args: list[str]) -> list[Finding]:
    if args and args[0] in ("list", "show"):
        return _parse_as("stash-" + args[0], args[1:]).findings
    return [Finding("ask", f"git stash {args[0] if args else ''}".rstrip()
                    + ": changes the working tree (only stash list/show are read-only)")]


def _remote(args: list[str]) -> list[Finding]:
    if args and args[0] == "get-url":
        return _parse_as("remote-get-url", args[1:]).findings
    p = _parse_as("remote", args)
    if p.operands:
        p.findings.append(Finding("ask", f"git remote {p.operands[0]}: changes remotes or "
                                  "reaches the network (only listing is read-only)"))
    return p.findings


def _worktree(args: list[str]) -> list[Finding]:
    if args and args[0] == "list":
        return _parse_as("worktree-list", args[1:]).findings
    return [Finding("ask", "git worktree: only `git worktree list` is read-only")]


def _reflog(args: list[str]) -> list[Finding]:
    if args and args[0] == "show":
        args = args[1:]
    elif args and not args[0].startswith("-") and args[0] in ("expire", "delete", "exists"):
        return [Finding("ask", f"git reflog {args[0]}: changes the reflog")]
    return parse(args, git_grammars()["log"]).findings


_CONFIG_READ = {"--get": (1, 2), "--get-all": (1, 2), "--get-regexp": (1, 2),
                "--get-urlmatch": (2, 2), "--list": (0, 0), "-l": (0, 0)}


def _config(args: list[str]) -> list[Finding]:
    """Only reading forms: one --get*/--list action, or ``get NAME`` / ``list`` (git 2.46),
    or a single NAME; anything with more words sets a value."""
    p = _parse_as("config", args)
    ops = p.operands
    actions = [n for n, _ in p.options if n in _CONFIG_READ]
    writes = "changes the git configuration, whose settings (core.fsmonitor, core.pager, " \
             "alias.*) can run programs later"
    if len(set(actions)) > 1:
        p.findings.append(Finding("ask", "git config: more than one action"))
    elif actions:
        lo, hi = _CONFIG_READ[actions[0]]
        if not lo <= len(ops) <= hi:
            p.findings.append(Finding("deny", f"git config {actions[0]} with {len(ops)} "
                                      f"names/values: {writes}"))
    elif ops[:1] == ["list"] and len(ops) == 1:
        pass
    elif ops[:1] == ["get"] and len(ops) == 2:
        pass
    elif len(ops) != 1 or ops[0] in ("set", "unset", "rename-section", "remove-section",
                                      "edit"):
        p.findings.append(Finding("deny", f"git config {' '.join(ops)}".rstrip() + ": "
                                  + writes))
    return p.findings


_HANDLERS: dict[str, Callable[[list[str]], list[Finding]]] = {
    "branch": _listing("branch", ("--list", "-l")),
    "tag": _listing("tag", ("--list", "-l")),
    "stash": _stash, "remote": _remote, "worktree": _worktree, "reflog": _reflog,
    "config": _config,
}
