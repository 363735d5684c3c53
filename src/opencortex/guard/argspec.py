"""Option grammars: parse an argv the way the program itself would, then judge each option.

A :class:`Grammar` lists a program's options known to be read-only ("ro"), the ones that
write, touch the network or open a pager ("ask") and the ones that run a program named in
the command ("deny").  :func:`parse` applies getopt's rules — bundled short flags (``-abc``),
stuck and separate values (``-n5``, ``-n 5``, ``--lines=5``, ``--lines 5``), ``--``, options
after operands (GNU permutation) and, where the program accepts them, unique-prefix
abbreviations of long options (``--upl`` = ``--upload-pack``).  Anything not in the table
is not known to be read-only, so it is a finding; an abbreviation is never read-only
(another version of the program may resolve it to a different option).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Literal

__all__ = ["Finding", "Grammar", "Opt", "Parsed", "grammar", "parse", "worst"]

Kind = Literal["ro", "ask", "deny"]
Arg = Literal["no", "req", "opt"]
_RANK = {"ro": 0, "ask": 1, "deny": 2}


@dataclass(frozen=True, slots=True)
class Finding:
    """Why a command is not plainly read-only: "ask" (needs the person) or "deny"."""

    kind: Kind
    reason: str


@dataclass(frozen=True, slots=True)
class Opt:
    kind: Kind = "ro"
    arg: Arg = "no"
    why: str = ""
    """For "ask"/"deny": what the option does, shown to the person."""


@dataclass(frozen=True, slots=True)
class Grammar:
    """One program's (or git subcommand's) options; see :func:`grammar` to build one."""

    name: str
    short: Mapping[str, Opt] = field(default_factory=dict)
    long: Mapping[str, Opt] = field(default_factory=dict)
    abbrev: bool = True
    """Long options may be abbreviated to a unique prefix (getopt_long, git parse-options)."""
    permute: bool = True
    """Options may follow operands (GNU); False: the first operand ends the options."""
    numeric: bool = False
    """``-5`` is a count (head, tail, git log, grep context)."""
    globs_ok: bool = False
    """Every option is harmless, so a shell glob that expands to ``--x`` cannot hurt."""


@dataclass(slots=True)
class Parsed:
    options: list[tuple[str, str | None]] = field(default_factory=list)
    """(canonical spelling such as ``--lines`` or ``-n``, value) in order."""
    operands: list[str] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)

    def has(self, *names: str) -> bool:
        return any(n in names for n, _ in self.options)

    def values(self, *names: str) -> list[str]:
        return [v for n, v in self.options if n in names and v is not None]


def grammar(name: str, ro: str = "", *, ask: Mapping[str, str] | None = None,
            deny: Mapping[str, str] | None = None, **flags: bool) -> Grammar:
    """Build a grammar from spellings: ``"-a --all -n= --lines= --color?"``.

    ``=`` after a name: it takes a value (stuck or the next word); ``?``: an optional
    value, stuck only (``--color=auto``, ``-Ovim``).  ``ask``/``deny`` map such a
    spelling list to the reason shown.
    """
    short: dict[str, Opt] = {}
    long: dict[str, Opt] = {}
    for kind, table in (("ro", {ro: ""}), ("ask", ask or {}), ("deny", deny or {})):
        for spec, why in table.items():
            for tok in spec.split():
                arg: Arg = "req" if tok.endswith("=") else "opt" if tok.endswith("?") else "no"
                nm = tok.rstrip("=?")
                opt = _opt(kind, arg, why)
                if nm.startswith("--"):
                    long[nm[2:]] = opt
                elif nm.startswith("-") and len(nm) == 2:
                    short[nm[1]] = opt
                else:
                    raise ValueError(f"bad option spelling {tok!r} in {name}")
    return Grammar(name, short, long, **flags)


@functools.cache
def _opt(kind: Kind, arg: Arg, why: str) -> Opt:
    return Opt(kind, arg, why)


def worst(findings: Iterable[Finding]) -> Kind:
    k: Kind = "ro"
    for f in findings:
        if _RANK[f.kind] > _RANK[k]:
            k = f.kind
    return k


def _resolve(name: str, g: Grammar) -> tuple[str, Opt, str] | tuple[None, None, str]:
    """(canonical, opt, note) for a long option name; note says it was abbreviated."""
    if name in g.long:
        return name, g.long[name], ""
    if not g.abbrev:
        return None, None, ""
    hits = [n for n in g.long if n.startswith(name)]
    if not hits:
        return None, None, ""
    hits.sort(key=lambda n: -_RANK[g.long[n].kind])
    best = hits[0]
    if len(hits) > 1:
        alts = ", ".join("--" + n for n in sorted(hits))
        return best, g.long[best], f"--{name} is an abbreviation of one of {alts}"
    return best, g.long[best], f"--{name} is an abbreviation of --{best}"


def _judge(g: Grammar, shown: str, opt: Opt, note: str, out: Parsed) -> None:
    what = f"{g.name} {shown}"
    if opt.kind == "deny":
        out.findings.append(Finding("deny", f"{what}: {note + '; ' if note else ''}"
                                    f"{opt.why or 'runs another program'}"))
    elif opt.kind == "ask":
        out.findings.append(Finding("ask", f"{what}: {note + '; ' if note else ''}"
                                    f"{opt.why or 'not read-only'}"))
    elif note:
        out.findings.append(Finding("ask", f"{what}: {note}; abbreviations are not "
                                    "accepted as read-only, spell the option out"))


def parse(args: list[str], g: Grammar, *,
          on_operand: Callable[[str, Parsed], bool] | None = None) -> Parsed:
    """Parse ``args`` (without the program name) with ``g``'s rules.

    ``on_operand`` may consume an operand itself (return True), e.g. ``date +FORMAT``.
    """
    out = Parsed()
    i, done = 0, False
    while i < len(args):
        a = args[i]
        i += 1
        if done or a == "-" or not a.startswith("-"):
            if not (on_operand and on_operand(a, out)):
                out.operands.append(a)
            if not g.permute:
                done = True
            continue
        if a == "--":
            done = True
            continue
        if a.startswith("--"):
            name, eq, val = a[2:].partition("=")
            canon, opt, note = _resolve(name, g)
            if opt is None or canon is None:
                out.findings.append(Finding("ask", f"{g.name} --{name}: not an option known "
                                            "to be read-only"))
                continue
            value: str | None = val if eq else None
            if opt.arg == "no" and eq:
                out.findings.append(Finding("ask", f"{g.name} --{name}: takes no value"))
            elif opt.arg == "req" and not eq:
                if i >= len(args):
                    out.findings.append(Finding("ask", f"{g.name} --{name}: value missing"))
                    continue
                value = args[i]
                i += 1
            out.options.append(("--" + canon, value))
            _judge(g, "--" + name, opt, note, out)
            continue
        if g.numeric and a[1:].isdigit():
            out.options.append(("-NUM", a[1:]))
            continue
        j = 1
        while j < len(a):
            c = a[j]
            opt = g.short.get(c)
            if opt is None:
                out.findings.append(Finding("ask", f"{g.name} -{c}" + (
                    f" (in {a})" if len(a) > 2 else "") + ": not an option known to be "
                    "read-only"))
                break
            value = None
            if opt.arg in ("req", "opt"):
                value = a[j + 1:] or None
                if value is None and opt.arg == "req":
                    if i >= len(args):
                        out.findings.append(Finding("ask", f"{g.name} -{c}: value missing"))
                        break
                    value = args[i]
                    i += 1
                out.options.append(("-" + c, value))
                _judge(g, "-" + c, opt, "", out)
                break
            out.options.append(("-" + c, None))
            _judge(g, "-" + c, opt, "", out)
            j += 1
    return out
