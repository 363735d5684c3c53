"""Redact credentials from text before it is logged, shown to a model or leaves the machine.

Linear time by construction: every pattern starts at a token boundary (a lookbehind), has
a literal or bounded start, and uses possessive quantifiers, so no input makes the regex
engine rescan a run from each position.  Passes run in sequence (each one linear) and are
skipped outright when their literal prefix does not occur.  Generic hex / UUID / hashes are
never touched: only known token shapes and values assigned to secret-named keys.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["SECRET_KINDS", "find_secrets", "redact"]

_T = r"A-Za-z0-9_\-"  # token characters


def _r(kind: str) -> str:
    return f"[REDACTED:{kind}]"


_Sub = str | Callable[[re.Match[str]], str]


@dataclass(frozen=True, slots=True)
class _Pass:
    kind: str
    pattern: re.Pattern[str]
    anchors: tuple[str, ...]
    """Literal substrings one of which every match contains; lines without any are skipped."""
    repl: _Sub
    line_local: bool = True
    """Matches never span a newline, so only the lines holding an anchor are scanned."""


_PASSES: list[_Pass] = []


def _add(kind: str, pattern: str, anchors: tuple[str, ...], repl: _Sub | None = None,
         *, line_local: bool = True) -> None:
    _PASSES.append(_Pass(kind, re.compile(pattern), anchors, repl or _r(kind), line_local))


def _keep_prefix(kind: str) -> Callable[[re.Match[str]], str]:
    """Keep group 1 (the key / scheme), replace the secret value."""
    return lambda m: m.group(1) + _r(kind)


# Patterns start with their literal (so the engine can skip ahead fast) and check the
# token boundary with a fixed-width lookbehind right after it.
_PEM_BODY = r"(?:(?!-----(?:END|BEGIN))[A-Za-z0-9+/=\s:,.\-])*+"
_add("private_key",
     r"-----BEGIN[A-Z0-9 ]{0,40}PRIVATE KEY-----" + _PEM_BODY
     + r"-----END[A-Z0-9 ]{0,40}PRIVATE KEY-----", ("PRIVATE KEY",), line_local=False)
_add("private_key",  # a truncated block: the header and the base64 lines after it
     r"-----BEGIN[A-Z0-9 ]{0,40}PRIVATE KEY-----(?:[ \t]*+\r?\n[ \t]*+[A-Za-z0-9+/=]{8,}+)*+",
     ("PRIVATE KEY",), line_local=False)
_add("anthropic", rf"sk-ant-(?<![{_T}]sk-ant-)[{_T}]{{20,}}+", ("sk-ant-",))
_add("openai", rf"sk-(?<![{_T}]sk-)(?!ant-)[{_T}]{{20,}}+", ("sk-",))
_add("github", rf"gh[pousr]_(?<![{_T}]gh[pousr]_)[A-Za-z0-9]{{30,}}+", ("gh",))
_add("github", rf"github_pat_(?<![{_T}]github_pat_)[A-Za-z0-9_]{{30,}}+", ("github_pat_",))
_add("slack", rf"xox[abposr]-(?<![{_T}]xox[abposr]-)[A-Za-z0-9\-]{{10,}}+", ("xox",))
_add("google_api_key", rf"AIza(?<![{_T}]AIza)[{_T}]{{35}}(?![{_T}])", ("AIza",))
_add("aws_access_key", r"A[KS]IA(?<![A-Za-z0-9]A[KS]IA)[A-Z0-9]{16}(?![A-Za-z0-9])",
     ("AKIA", "ASIA"))
_add("aws_secret",
     r"((?:aws|AWS|Aws)(?<![A-Za-z0-9](?:aws|AWS|Aws))_?(?i:secret(?:_?access)?(?:_?key)?)"
     r"[\"']?+[ \t]{0,8}+[:=][ \t]{0,8}+[\"']?+)[A-Za-z0-9/+=]{40}(?![A-Za-z0-9/+=])",
     ("aws", "AWS", "Aws"), _keep_prefix("aws_secret"))
_add("jwt", rf"eyJ(?<![{_T}]eyJ)[{_T}]{{5,}}+\.eyJ[{_T}]{{5,}}+\.[{_T}]*+", ("eyJ",))
_add("bearer",
     r"(?i:((?<![A-Za-z0-9_\-])(?:proxy-)?authorization[\"']?+[ \t]{0,8}+[:=][ \t]{0,8}+"
     r"(?:(?:bearer|basic|token|bot|digest)[ \t]++)?))[^\s\"',;]{4,}+",
     ("uthorization", "UTHORIZATION"), _keep_prefix("bearer"))
_add("bearer", r"(?i:((?<![A-Za-z0-9_\-])bearer[ \t]++))[A-Za-z0-9._~+/=\-]{16,}+",
     ("earer", "EARER"), _keep_prefix("bearer"))
_add("url_password", r"://([^\s/:@\[\]]{1,256}+:)[^\s/@]{1,256}+(?=@)", ("://",),
     lambda m: "://" + m.group(1) + _r("url_password"))

_TELEGRAM = re.compile(rf":(?<=[0-9]:)[{_T}]{{35}}(?![{_T}])")


def _telegram(text: str) -> str:
    """``123456789:AA...`` bot tokens: find the ``:`` + 35 chars, then check the digits."""
    out: list[str] = []
    last = 0
    for m in _TELEGRAM.finditer(text):
        i = m.start()
        j = i
        while j > 0 and i - j <= 12 and text[j - 1].isdigit() and text[j - 1].isascii():
            j -= 1
        if not 6 <= i - j <= 12 or (j > 0 and (text[j - 1].isalnum() or text[j - 1] == ":")):
            continue
        if j < last:
            continue
        out += [text[last:j], _r("telegram")]
        last = m.end()
    if not out:
        return text
    out.append(text[last:])
    return "".join(out)


def _lines_with(text: str, anchors: tuple[str, ...]) -> list[tuple[int, int]]:
    """Sorted, merged spans of the lines containing any anchor (found with str.find)."""
    spans: list[tuple[int, int]] = []
    for a in anchors:
        i = text.find(a)
        while i != -1:
            s = text.rfind("\n", 0, i) + 1
            e = text.find("\n", i)
            e = len(text) if e == -1 else e
            spans.append((s, e))
            i = text.find(a, e)
    spans.sort()
    merged: list[tuple[int, int]] = []
    for s, e in spans:
        if merged and s <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(e, merged[-1][1]))
        else:
            merged.append((s, e))
    return merged


def _sub_lines(text: str, pattern: re.Pattern[str], repl: _Sub,
               anchors: tuple[str, ...]) -> str:
    spans = _lines_with(text, anchors)
    if not spans:
        return text
    if sum(e - s for s, e in spans) > len(text) // 2:
        return pattern.sub(repl, text)
    out: list[str] = []
    last = 0
    for s, e in spans:
        out += [text[last:s], pattern.sub(repl, text[s:e])]
        last = e
    out.append(text[last:])
    return "".join(out)


_SECRET_WORDS = frozenset({"password", "passwd", "passphrase", "secret", "token", "apikey",
                           "credential", "credentials", "pat"})
_KEY_PREFIXES = frozenset({"api", "access", "private", "secret", "auth", "client", "signing",
                           "encryption", "master", "session", "bot"})
_KEY_PARTS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+")
_NOT_SECRET = frozenset({"true", "false", "null", "none", "nil", "yes", "no", "required",
                         "optional", "string", "redacted"})


def _secret_key(key: str) -> bool:
    """Does this key name a secret?  Judged by its last word(s): GITHUB_TOKEN, apiKey, ...

    ``max_tokens`` / ``token_count`` / ``primary_key`` are not secrets.
    """
    parts = [p.lower() for p in _KEY_PARTS.findall(key)]
    if not parts:
        return False
    last = parts[-1]
    if last in _SECRET_WORDS:
        return True
    return last == "key" and len(parts) > 1 and parts[-2] in _KEY_PREFIXES


_ASSIGN = re.compile(
    r"(?<![A-Za-z0-9_.])(?P<key>[A-Za-z_][A-Za-z0-9_.\-]{0,80}+)(?P<sep>[\"']?+[ \t]{0,8}+"
    r"[:=][ \t]{0,8}+)(?P<val>\"[^\"\n]{1,512}+\"|'[^'\n]{1,512}+'|[^\s\"',;]{1,512}+)")


def _assign(m: re.Match[str]) -> str:
    key, val = m.group("key"), m.group("val")
    bare = val.strip("\"'")
    if (not _secret_key(key) or len(bare) < 4 or bare.startswith(("[REDACTED", "$", "<", "%"))
            or bare.lower() in _NOT_SECRET or set(bare) <= {"*", "x", "X", "."}):
        return m.group(0)
    q = val[0] if val[0] in "\"'" else ""
    return f"{key}{m.group('sep')}{q}{_r('secret')}{q}"


SECRET_KINDS: tuple[str, ...] = (*dict.fromkeys(p.kind for p in _PASSES), "telegram", "secret")


_ASSIGN_ANCHORS = tuple(v for w in ("pass", "secret", "token", "key", "pat", "credential")
                        for v in (w, w.upper(), w.capitalize()))


def redact(text: str) -> str:
    """``text`` with every recognised credential replaced by ``[REDACTED:<kind>]``."""
    if not text:
        return text
    for p in _PASSES:
        if not any(a in text for a in p.anchors):
            continue
        if p.line_local:
            text = _sub_lines(text, p.pattern, p.repl, p.anchors)
        else:
            text = p.pattern.sub(p.repl, text)
    if ":" in text:
        text = _telegram(text)
    if ":" in text or "=" in text:
        text = _sub_lines(text, _ASSIGN, _assign, _ASSIGN_ANCHORS)
    return text


def find_secrets(text: str) -> list[str]:
    """The kinds of secret present in ``text`` (for logging a refusal without the value)."""
    out = redact(text)
    return sorted(set(re.findall(r"\[REDACTED:([a-z_]+)\]", out))
                  - set(re.findall(r"\[REDACTED:([a-z_]+)\]", text)))
