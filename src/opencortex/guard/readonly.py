"""Which commands are read-only: per-program option tables, allow by argument.

:func:`classify` answers, for one program and its arguments, the findings that keep it
from being plainly read-only: "ask" (it may write, reach the network, open a pager, or is
simply not known) or "deny" (it would run a program named in the command).  No finding
means every option and operand was recognised as read-only.  A program without a table
here is never read-only, whatever the allowlist says.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from .argspec import Finding, Grammar, Parsed, grammar, parse
from .gitargs import classify_git

__all__ = ["GRAMMARS", "READ_ONLY_PROGRAMS", "WRAPPER_GRAMMARS", "classify", "exec_commands",
           "globs_ok", "grammars"]

_HELP = "--help --version"
_FOLLOW = "follows symbolic links, which can lead outside the memex"
_NAMES = "reads the names of the files to open from a file, which the path check cannot see"

GRAMMARS: dict[str, Grammar] = {
    "cat": grammar("cat", "-A --show-all -b --number-nonblank -e -E --show-ends -n --number "
                   "-s --squeeze-blank -t -T --show-tabs -u -v --show-nonprinting " + _HELP,
                   globs_ok=True),
    "ls": grammar("ls", (
        "-a --all -A --almost-all --author -b --escape --block-size= -B --ignore-backups -c -C "
        "--color? --colour? -d --directory -D --dired -f -F --classify? --file-type "
        "--format= --full-time -g --group-directories-first -G --no-group -h "
        "--human-readable --si -H --dereference-command-line "
        "--dereference-command-line-symlink-to-dir --hide= --hyperlink? --indicator-style= "
        "-i --inode -I= --ignore= -k --kibibytes -l -m -n "
        "--numeric-uid-gid -N --literal -o -p -q --hide-control-chars --show-control-chars "
        "-Q --quote-name --quoting-style= -r --reverse -R --recursive -s --size -S --sort= "
        "--time= --time-style= -t -T= --tabsize= -u -U -v -w= --width= -x -X -Z --context "
        "--zero -1 " + _HELP), ask={"-L --dereference": _FOLLOW}),
    "wc": grammar("wc", "-c --bytes -m --chars -l --lines -L "
                  "--max-line-length -w --words --total= " + _HELP,
                  ask={"--files0-from=": _NAMES}),
    "head": grammar("head", "-c= --bytes= -n= --lines= -q --quiet --silent -v --verbose -z "
                    "--zero-terminated " + _HELP, numeric=True, globs_ok=True),
    "tail": grammar("tail", "-c= --bytes= -n= --lines= -q --quiet --silent -v --verbose -z "
                    "--zero-terminated -f --follow? -F --max-unchanged-stats= --pid= -s= "
                    "--sleep-interval= --retry " + _HELP, numeric=True, globs_ok=True),
    "grep": grammar("grep", (
        "-E --extended-regexp -F --fixed-strings -G --basic-regexp -P --perl-regexp "
        "-e= --regexp= -f= --file= -i --ignore-case --no-ignore-case -v --invert-match "
        "-w --word-regexp -x --line-regexp -y -c --count --color? --colour? -L "
        "--files-without-match -l --files-with-matches -m= --max-count= -o "
        "--only-matching -q --quiet --silent -s --no-messages -b --byte-offset -H "
        "--with-filename -h --no-filename --label= -n --line-number -T --initial-tab -Z "
        "--null -z --null-data -A= --after-context= -B= --before-context= -C= --context= "
        "-a --text --binary-files= -D= --devices= -d= --directories= --exclude= "
        "--exclude-from= --exclude-dir= -I --include= -r --recursive "
        "--line-buffered -U --binary --no-group-separator "
        "--group-separator= -V " + _HELP), numeric=True,
        ask={"-R --dereference-recursive": _FOLLOW}),
    "rg": grammar("rg", (
        "-e= --regexp= -f= --file= -A= --after-context= -B= --before-context= -C= "
        "--context= -c --count --count-matches --color= --colors= --column --no-column -l "
        "--files-with-matches --files-without-match --files -F --fixed-strings "
        "--no-fixed-strings -i --ignore-case -S --smart-case -s --case-sensitive -v "
        "--invert-match -w --word-regexp -x --line-regexp -n --line-number -N "
        "--no-line-number -H --with-filename -I --no-filename --no-heading --heading -g= "
        "--glob= --iglob= --glob-case-insensitive -t= --type= -T= --type-not= --type-list "
        "--type-add= --type-clear= -u --unrestricted -. --hidden --no-hidden --no-ignore "
        "--no-ignore-vcs --no-ignore-parent --no-ignore-dot --no-ignore-global "
        "--no-ignore-exclude --no-ignore-files --ignore-file= --ignore-file-case-insensitive "
        "--no-follow -m= --max-count= -d= --max-depth= --maxdepth= "
        "--max-filesize= -o --only-matching -r= --replace= -p --pretty -j= --threads= "
        "--json --no-json -z --search-zip --no-search-zip -0 --null --null-data -U "
        "--multiline --no-multiline --multiline-dotall -P --pcre2 --no-pcre2 --engine= "
        "--sort= --sortr= --sort-files --stats --no-stats --trim --no-trim -q --quiet "
        "-M= --max-columns= --max-columns-preview -a --text --no-text --binary --no-binary "
        "--no-config --debug --trace --vimgrep -b --byte-offset --crlf --no-crlf "
        "--encoding= -E= --no-encoding --no-messages --messages --no-unicode --unicode "
        "--one-file-system --passthru --passthrough --path-separator= --line-buffered "
        "--block-buffered --mmap --no-mmap --dfa-size-limit= --regex-size-limit= "
        "--hyperlink-format= --include-zero --no-pcre2-unicode --field-context-separator= "
        "--field-match-separator= --context-separator= --no-context-separator -h --help "
        "-V --version"),
        ask={"-L --follow": _FOLLOW},
        deny={"--pre= --hostname-bin=": "runs the program it names (on every file searched)"},
        abbrev=False),
    "date": grammar("date", "-d= --date= --debug -f= --file= -I? --iso-8601? -R --rfc-email "
                    "--rfc-3339= -r= --reference= -u --utc --universal " + _HELP,
                    ask={"-s= --set=": "sets the system clock"}),
    "pwd": grammar("pwd", "-L -P --logical --physical " + _HELP),
    "true": grammar("true", ""),
    "false": grammar("false", ""),
    "sort": grammar("sort", (
        "-b --ignore-leading-blanks -d --dictionary-order -f --ignore-case -g "
        "--general-numeric-sort -i --ignore-nonprinting -M --month-sort -h "
        "--human-numeric-sort -n --numeric-sort -R --random-sort --random-source= -r "
        "--reverse --sort= -V --version-sort --batch-size= -c --check? -C -k= --key= -m "
        "--merge -s --stable -S= --buffer-size= -t= --field-separator= -T= "
        "--temporary-directory= -u --unique -z --zero-terminated --parallel= "
        "--debug " + _HELP),
        ask={"-o= --output=": "writes its output to the named file",
             "--files0-from=": _NAMES},
        deny={"--compress-program=": "runs the program it names"}),
    "uniq": grammar("uniq", "-c --count -d --repeated -D --all-repeated? -f= --skip-fields= "
                    "--group? -i --ignore-case -s= --skip-chars= -u --unique -z "
                    "--zero-terminated -w= --check-chars= " + _HELP),
}

_SED = grammar("sed", "-n --quiet --silent --debug -e= --expression= -E -r --regexp-extended "
               "-s --separate -u --unbuffered -z --null-data -l= --line-length= --posix "
               "--sandbox --follow-symlinks -b --binary " + _HELP,
               ask={"-i? --in-place?": "edits the files in place",
                    "-f= --file=": "reads its script from a file, which cannot be checked"})

_TAR = grammar("tar", (
    "-t --list -f= --file= -v --verbose -z --gzip --gunzip --ungzip -j --bzip2 -J --xz "
    "--lzma --lzip --lzop --zstd -a --auto-compress -O --to-stdout -C= --directory= "
    "-T= --files-from= -X= --exclude-from= --exclude= --wildcards --no-wildcards "
    "--anchored --no-anchored --ignore-case --no-ignore-case --null --no-null -b= "
    "--blocking-factor= -B --read-full-records -i --ignore-zeros --numeric-owner -R "
    "--block-number --full-time --utc --quoting-style= --show-transformed-names "
    "--show-stored-names --strip-components= --transform= --xform= --occurrence? "
    "--force-local -H= --format= --totals? -w --interactive --confirmation -x --extract "
    "--get -k --keep-old-files --skip-old-files -m --touch -p --preserve-permissions "
    "--same-permissions -o --no-same-owner " + _HELP),
    ask={"-c --create -r --append -u --update -A --catenate --concatenate --delete "
         "--remove-files -U --unlink-first --overwrite --recursive-unlink "
         "-g= --listed-incremental= --index-file= --volno-file= -G --incremental "
         "-M --multi-volume -L= --tape-length= -V= --label=": "creates or changes files",
         "--rsh-command= --rmt-command=": "talks to a remote host"},
    deny={"-I= --use-compress-program= --to-command= --checkpoint-action= -F= "
          "--info-script= --new-volume-script=": "runs the program it names"})

WRAPPER_GRAMMARS: dict[str, Grammar] = {
    # wrappers judged by what they run; only these options of their own are known
    "env": grammar("env", "-0 --null -C= --chdir= -v --debug", permute=False,
                   ask={"-i --ignore-environment -u= --unset=": "removes variables the guard "
                        "sets so that a repository's own config cannot start programs "
                        "(GIT_CONFIG_*, PAGER)"}),
    "nice": grammar("nice", "-n= --adjustment=", permute=False),
    "timeout": grammar("timeout", "-s= --signal= -k= --kill-after= --preserve-status "
                       "--foreground -v --verbose", permute=False),
    "nohup": grammar("nohup", "", permute=False),
    "command": grammar("command", "-p -v -V", permute=False),
}
READ_ONLY_PROGRAMS = frozenset([*GRAMMARS, "echo", "find", "git", "sed", "tar"])


def grammars() -> dict[str, Grammar]:
    """Every option table, by the words that start the command ("sort", "git log", ...)."""
    from .gitargs import git_grammars

    out = {**GRAMMARS, "sed": _SED, "tar": _TAR}
    out.update({g.name: g for g in git_grammars().values()})
    return out


def globs_ok(name: str) -> bool:
    """Can a shell glob among this program's words be let through (no harmful option)?"""
    g = GRAMMARS.get(name)
    return name == "echo" or (g is not None and g.globs_ok)


def classify(name: str, args: list[str]) -> list[Finding]:
    """Findings against read-only for ``name args`` (the program's base name)."""
    if name == "echo":
        return []  # every word is printed; echo has no option that does anything else
    if name == "git":
        return classify_git(args)
    special = _SPECIAL.get(name)
    if special is not None:
        return special(args)
    g = GRAMMARS.get(name)
    if g is None:
        return [Finding("ask", f"{name} has no read-only table: whatever it does is not "
                        "known to be read-only")]
    p = parse(args, g, on_operand=_DATE_FORMAT if name == "date" else None)
    if name == "date" and p.operands:
        p.findings.append(Finding("ask", f"date {p.operands[0]}: sets the system clock"))
    if name == "uniq" and len(p.operands) > 1:
        p.findings.append(Finding("ask", f"uniq {p.operands[1]}: writes its output to "
                                  "that file"))
    return p.findings


def _date_format(a: str, p: Parsed) -> bool:
    return a.startswith("+")


_DATE_FORMAT = _date_format


# -- find -----------------------------------------------------------------------------
_FIND_ARG1 = frozenset(
    "-name -iname -path -ipath -wholename -iwholename -regex -iregex -regextype -type "
    "-xtype -size -mtime -mmin -atime -amin -ctime -cmin -newer -anewer -cnewer -used "
    "-perm -user -group -uid -gid -links -inum -samefile -lname -ilname -maxdepth "
    "-mindepth -fstype -context -printf".split())
_FIND_ARG0 = frozenset(
    "-empty -executable -readable -writable -nouser -nogroup -depth -mount -xdev -noleaf "
    "-daystart -ignore_readdir_race -noignore_readdir_race -warn -nowarn -print "
    "-print0 -ls -prune -quit -true -false -not -and -or -a -o -help --help -version "
    "--version".split())
_FIND_WRITES = frozenset(["-fprint", "-fprint0", "-fls"])


def _find(args: list[str]) -> list[Finding]:
    out: list[Finding] = []
    i = 0
    while i < len(args):  # find's own options come before the starting points
        a = args[i]
        if a in ("-H", "-L", "-P") or (a.startswith("-O") and a[2:].isdigit()):
            if a == "-L":
                out.append(Finding("ask", f"find -L: {_FOLLOW}"))
            i += 1
        elif a == "-D":
            i += 2
        else:
            break
    while i < len(args) and not args[i].startswith("-") and args[i] not in ("(", "!", ")",
                                                                          ","):
        i += 1  # starting points
    while i < len(args):
        a = args[i]
        i += 1
        if a in ("(", ")", "!", ","):
            continue
        if a == "-delete":
            out.append(Finding("deny", "find -delete deletes every file it matches; use a "
                               "memex write instead"))
        elif a == "-follow":
            out.append(Finding("ask", f"find -follow: {_FOLLOW}"))
        elif a == "-files0-from":
            out.append(Finding("ask", f"find -files0-from: {_NAMES}"))
            i += 1
        elif a in _FIND_WRITES or a == "-fprintf":
            out.append(Finding("ask", f"find {a}: writes to the file it names"))
            i += 2 if a == "-fprintf" else 1
        elif a in ("-exec", "-execdir", "-ok", "-okdir"):
            j = i
            while j < len(args) and args[j] not in (";", "+"):
                j += 1
            out.append(Finding("ask", f"find {a}: runs {' '.join(args[i:j][:1]) or 'a program'}"
                               " on every file found"))
            i = j + 1
        elif a in _FIND_ARG1 or re.fullmatch(r"-newer[aBcmt][aBcmt]", a):
            if i >= len(args):
                out.append(Finding("ask", f"find {a}: value missing"))
            i += 1
        elif a in _FIND_ARG0:
            continue
        else:
            out.append(Finding("ask", f"find {a}: not a find expression known to be "
                               "read-only"))
    return out


def exec_commands(args: list[str]) -> list[list[str]]:
    """The commands ``find ... -exec CMD ;`` would run (to check them as commands)."""
    found, i = [], 0
    while i < len(args):
        if args[i] in ("-exec", "-execdir", "-ok", "-okdir"):
            j = i + 1
            while j < len(args) and args[j] not in (";", "+"):
                j += 1
            found.append(args[i + 1:j])
            i = j
        i += 1
    return found


# -- sed ------------------------------------------------------------------------------
_SED_SIMPLE = set("=dDgGhHlnNpPxzF")


def _sed(args: list[str]) -> list[Finding]:
    p = parse(args, _SED)
    scripts = p.values("-e", "--expression")
    if not scripts and not p.has("-f", "--file"):
        if not p.operands:
            return [*p.findings, Finding("ask", "sed without a script")]
        scripts = [p.operands[0]]
    for s in scripts:
        why = _sed_script(s)
        if why:
            p.findings.append(Finding("deny" if "runs" in why else "ask", f"sed {why}"))
    return p.findings


def _sed_script(s: str) -> str | None:
    """None if the sed script only reads and prints; else what it would do."""
    i, n = 0, len(s)

    def skip_ws(k: int) -> int:
        while k < n and s[k] in " \t\n;":
            k += 1
        return k

    def regex(k: int, delim: str) -> int:
        """Index just after the closing ``delim`` of a regex/replacement starting at k."""
        while k < n and s[k] != delim:
            if s[k] == "\\":
                k += 1
            elif s[k] == "\n":
                return -1
            k += 1
        return k + 1 if k < n else -1

    def address(k: int) -> int:
        if k < n and s[k] in "0123456789$":
            while k < n and s[k] in "0123456789$~":
                k += 1
        elif k < n and s[k] == "/":
            k = regex(k + 1, "/")
        elif k < n and s[k] == "\\" and k + 1 < n:
            k = regex(k + 2, s[k + 1])
        if k < 0:
            return -1
        while k < n and s[k] in "IM":
            k += 1
        return k

    while True:
        i = skip_ws(i)
        if i >= n:
            return None
        if s[i] == "#":
            while i < n and s[i] != "\n":
                i += 1
            continue
        i = address(i)
        if i < 0:
            return f"script {s!r} could not be parsed"
        if i < n and s[i] == ",":
            i += 1
            if i < n and s[i] in "+~":
                i += 1
            i = address(i)
            if i < 0:
                return f"script {s!r} could not be parsed"
        while i < n and s[i] in " \t!":
            i += 1
        if i >= n:
            return f"script {s!r} ends after an address"
        c = s[i]
        i += 1
        if c in "{}" or c in _SED_SIMPLE:
            continue
        if c in "qQlL":
            while i < n and s[i].isdigit():
                i += 1
            continue
        if c in ":btT":
            while i < n and s[i] not in ";\n":
                i += 1
            continue
        if c in "aic":
            while i < n and s[i] != "\n":  # text to the end of the line
                if s[i] == "\\":
                    i += 1
                i += 1
            continue
        if c in "rR":
            return f"script {s!r}: the {c} command reads the file it names, which the " \
                "path check cannot see"
        if c in "wW":
            return f"script {s!r}: the {c} command writes to a file"
        if c == "e":
            return f"script {s!r}: the e command runs a shell command"
        if c in "sy":
            if i >= n or s[i] in "\\\n":
                return f"script {s!r} could not be parsed"
            d = s[i]
            i = regex(i + 1, d)
            if i > 0:
                i = regex(i, d)
            if i < 0:
                return f"script {s!r} could not be parsed"
            if c == "s":
                while i < n and s[i] not in ";\n}":
                    f = s[i]
                    if f == "e":
                        return f"script {s!r}: the s///e flag runs a shell command"
                    if f == "w":
                        return f"script {s!r}: the s///w flag writes to a file"
                    if not (f in "gpiImM" or f.isdigit() or f in " \t"):
                        return f"script {s!r}: unknown s flag {f!r}"
                    i += 1
            continue
        return f"script {s!r}: command {c!r} is not known to be read-only"


# -- tar ------------------------------------------------------------------------------
def _tar(args: list[str]) -> list[Finding]:
    if args and not args[0].startswith("-") and args[0]:
        # old style: "tvf x.tar" is "-t -v -f x.tar"; letters taking values use next words
        letters, rest, k = args[0], args[1:], 0
        bundled: list[str] = []
        for ch in letters:
            opt = _TAR.short.get(ch)
            if opt is not None and opt.arg == "req" and k < len(rest):
                bundled += ["-" + ch, rest[k]]
                k += 1
            else:
                bundled.append("-" + ch)
        args = bundled + rest[k:]
    p = parse(args, _TAR)
    listing = p.has("-t", "--list")
    extract = p.has("-x", "--extract", "--get")
    if extract and not p.has("-O", "--to-stdout"):
        p.findings.append(Finding("ask", "tar -x: extracts files (only -x with -O/--to-stdout"
                                  " is read-only)"))
    elif not listing and not extract and not any(f.kind != "ro" for f in p.findings):
        p.findings.append(Finding("ask", "tar: only listing (-t) and extracting to stdout "
                                  "(-xO) are known read-only modes"))
    for v in p.values("-f", "--file"):
        if ":" in v and not p.has("--force-local"):
            p.findings.append(Finding("ask", f"tar -f {v}: a name with ':' is a remote "
                                      "archive reached through rsh/ssh"))
    if p.has("-w", "--interactive", "--confirmation", "-k", "--keep-old-files",
             "--skip-old-files", "-m", "--touch", "-p", "--preserve-permissions",
             "--same-permissions", "-o", "--no-same-owner") and not p.has("-O", "--to-stdout"):
        p.findings.append(Finding("ask", "tar: extraction options without -O write files"))
    return p.findings


_SPECIAL: dict[str, Callable[[list[str]], list[Finding]]] = {
    "find": _find, "sed": _sed, "tar": _tar,
}
