"""Reading a vague recall: is there one (activation), what does it bind to, and what is the
cue — the past meant, the whole, the axes (time ranges, people, artifacts, identifiers,
coined terms) it can be reached along.

The cue is read afresh from every person turn of the recall on each pass, so a later
correction ("no, the whole migration, not one session") replaces what it contradicts.
Offline and deterministic; a model may add its reading on top (see ``recall.engine``)."""

from __future__ import annotations

import calendar
import datetime as dt
import re
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = ["Axis", "Cue", "TimeRange", "activation", "bind", "read_cue", "terms_of",
           "without_time_words"]

Whole = Literal["session", "line", "topic", "concept", "change"]


@dataclass(frozen=True)
class TimeRange:
    """A time expression resolved against "now" (inclusive start, exclusive end)."""

    start: dt.datetime
    end: dt.datetime
    phrase: str

    def to_dict(self) -> dict[str, str]:
        return {"phrase": self.phrase, "from": self.start.isoformat(timespec="minutes"),
                "to": self.end.isoformat(timespec="minutes")}


@dataclass(frozen=True)
class Axis:
    """One way the past can be reached: ``kind`` is time, person, artifact, identifier,
    version (a release number, :func:`version_key`), coined (a quoted or coined term), term (a plain content word of the person's) or
    synonym (a search word a configured model proposed)."""

    kind: str
    value: str
    range: TimeRange | None = None

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"kind": self.kind, "value": self.value}
        if self.range:
            d["range"] = self.range.to_dict()
        return d


@dataclass
class Cue:
    meant: str
    whole: str
    axes: list[Axis]
    excluded: list[str] = field(default_factory=list)
    places: list[str] = field(default_factory=list)
    undone: bool = False
    """The person speaks of a change that was taken back ("reverted", "backed out", "took
    it back", "the undoing commit"): the revert of what the cue describes is meant."""

    @property
    def time(self) -> TimeRange | None:
        for a in self.axes:
            if a.range is not None:
                return a.range
        return None

    @property
    def terms(self) -> list[str]:
        """Words to search for: every non-time axis value, split into words."""
        out: list[str] = []
        for a in self.axes:
            if a.kind == "time":
                continue
            for w in (a.value.split() if a.kind in ("term", "coined", "person", "synonym")
                      else [a.value]):
                if w.lower() not in (x.lower() for x in out):
                    out.append(w)
        return out

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"meant": self.meant, "whole": self.whole,
                             "axes": [a.to_dict() for a in self.axes]}
        if self.undone:
            d["undone"] = True
        if self.excluded:
            d["excluded"] = self.excluded
        if self.places:
            d["places"] = self.places
        return d


# -- activation and binding ---------------------------------------------------------------

_INVOKE = re.compile(r"^\s*/recollect\b|^\s*/recall\b", re.I)
_VAGUE_TIME = re.compile(
    r"\b(?:a (?:few|couple of?) (?:days|weeks|months|years) ago|some (?:time|weeks|months) ago|"
    r"a while (?:ago|back)|the other (?:day|week)|recently|last (?:week|month|year|spring|"
    r"summer|autumn|fall|winter|time)|earlier this (?:week|month|year)|back (?:then|in \w+)|"
    r"(?:\w+ )?(?:days|weeks|months) ago|yesterday|in (?:january|february|march|april|may|june|"
    r"july|august|september|october|november|december))\b", re.I)
_EXISTENCE = re.compile(
    r"\b(?:that|the) (?:session|conversation|chat|thing|fix|idea|bug|discussion|time|one|"
    r"change|commit|migration|plan|note|script|trick|hack|workaround)\b (?:where|when|with|about|"
    r"we|i|that|from|in which)\b|\bthere was (?:a|some|this)\b|\bsomething (?:about|like|with)\b|"
    r"\bwhat was (?:that|the)\b|\bthat thing\b", re.I)
_SELF_REF = re.compile(
    r"\bi (?:vaguely |kind of |sort of )?(?:remember|recall|think) (?:we|i|that|when|there)\b|"
    r"\b(?:we|i) (?:once|at some point|previously|before) (?:\w+ )?(?:fixed|did|wrote|discussed|"
    r"talked|worked|tried|had|decided|built|found)\b|\bremember when\b|"
    r"\b(?:do|did) you (?:remember|recall)\b", re.I)
_EFFORT = re.compile(
    r"\b(?:can'?t|cannot|don'?t) (?:quite )?(?:remember|recall|find|place)\b|"
    r"\bwhat was it (?:called|again)\b|\bon the tip of my tongue\b|\bi forget (?:what|where|"
    r"which|how|when)\b|\bwhere (?:was|did) (?:that|we|i)\b|\.\.\.|\bsomething or other\b|"
    r"\bwhatever it was\b|\bor something\b", re.I)


def activation(text: str, invoked: bool = False) -> tuple[bool, str]:
    """Whether a recall runs for ``text``, with the reason (shown when it does not)."""
    if invoked or _INVOKE.search(text):
        return True, "invoked by the person"
    found = [(name, m.group(0)) for name, rx in (
        ("vague time", _VAGUE_TIME), ("existence without a locator", _EXISTENCE),
        ("uncertain self-reference", _SELF_REF), ("visible recall effort", _EFFORT))
        if (m := rx.search(text))]
    pointers = [f for f in found if f[0] != "vague time"]
    if pointers or (found and _PAST_VERB.search(text)):
        return True, "empty intention: " + "; ".join(f"{n} («{s}»)" for n, s in found)
    if found:
        return False, (f"a time is named («{found[0][1]}») but no past work is pointed at; "
                       "no recall")
    return False, ("no empty intention: nothing points at a past without naming it "
                   "(say /recollect to ask for one)")


_PAST_VERB = re.compile(r"\b(?:we|i)\b.*\b(?:\w+ed|did|had|was|were|wrote|made|built|found|"
                        r"thought|took|came up|ran|went|saw|got|set up)\b", re.I)
_TRIGGER = re.compile(r"\s*(?:,|—|-|\.)?\s*\b(?:recall|recollect|remember|find)\b(?: (?:it|that|"
                      r"this|the topic|please))?\s*[.!?]*\s*$", re.I)
_SPLIT_REFS = re.compile(r"\s*(?:;|\band also\b|\bplus\b|\bas well as\b)\s*", re.I)


def bind(text: str, previous_person_turn: str | None = None) -> tuple[str | None, list[str]]:
    """What the recall is about: an explicit ``/recollect`` argument, else the text before a
    trailing trigger ("the pricing idea — recall it"), else the previous person turn. With
    several vague references the first is bound and the others returned as noted."""
    m = _INVOKE.match(text)
    if m:
        arg = text[m.end():].strip().strip('"“”')
        bound = arg or (previous_person_turn or "").strip() or None
    else:
        t = _TRIGGER.search(text)
        bound = (text[:t.start()] if t and text[:t.start()].strip() else text).strip() or None
    if not bound:
        return None, []
    parts = [p for p in _SPLIT_REFS.split(bound) if p.strip()]
    vague = [p for p in parts if any(rx.search(p) for rx in (_VAGUE_TIME, _EXISTENCE,
                                                              _SELF_REF, _EFFORT))]
    if len(vague) > 1:
        return vague[0].strip(), [p.strip() for p in vague[1:]]
    return bound, []


# -- time expressions ----------------------------------------------------------------------

_MONTHS = {m.lower(): i for i, m in enumerate(calendar.month_name) if m}
_MONTHS.update({m.lower(): i for i, m in enumerate(calendar.month_abbr) if m})
_NUM = {"a": 1, "an": 1, "one": 1, "two": 2, "couple": 2, "a couple": 2, "a couple of": 2,
        "three": 3, "few": 3, "a few": 3, "several": 4, "four": 4, "five": 5, "six": 6}
_SEASONS = {"spring": (3, 6), "summer": (6, 9), "autumn": (9, 12), "fall": (9, 12),
            "winter": (12, 15)}
_UNIT_DAYS = {"day": 1, "week": 7, "month": 30, "year": 365}


def _day(now: dt.datetime, days_back: float) -> dt.datetime:
    return now - dt.timedelta(days=days_back)


def _month_start(y: int, m: int, tz: dt.tzinfo | None) -> dt.datetime:
    y, m = y + (m - 1) // 12, (m - 1) % 12 + 1
    return dt.datetime(y, m, 1, tzinfo=tz)


def resolve_time(text: str, now: dt.datetime) -> TimeRange | None:
    """The first time expression in ``text`` as a generous range (people misremember:
    "a few weeks ago" reaches from about 10 days to about 2 months back): a distance back
    from now, or a date the person gives ("late March 2020", ``recall.dates``) — the one
    the text leads with."""
    from .dates import dated_phrases

    t = text.lower()
    found = [(p.at, TimeRange(p.start, p.end, p.phrase)) for p in dated_phrases(t, now)]
    rel = _relative_time(t, now)
    if rel is not None:
        found.append((t.find(rel.phrase), rel))
    return min(found, key=lambda f: f[0])[1] if found else None


def _relative_time(text: str, now: dt.datetime) -> TimeRange | None:
    """The first time phrase that says how far back from now (or a bare ISO day)."""
    tz = now.tzinfo
    today = now.replace(hour=0, minute=0, second=0, microsecond=0)
    t = text.lower()
    m = re.search(r"\b(yesterday|today|this morning|earlier today)\b", t)
    if m:
        back = 1 if m.group(1) == "yesterday" else 0
        return TimeRange(today - dt.timedelta(days=back + (1 if back else 0)),
                         today + dt.timedelta(days=1 - back), m.group(0))
    m = re.search(r"\b(?:(a|an|one|two|three|four|five|six|several|a few|few|a couple(?: of)?|"
                  r"couple of|\d+) )?(day|week|month|year)s? ago\b", t)
    if m:
        n = _NUM.get((m.group(1) or "a").strip(), None)
        if n is None:
            n = int(m.group(1)) if (m.group(1) or "").isdigit() else 1
        unit = _UNIT_DAYS[m.group(2)]
        vague = (m.group(1) or "").strip() in ("a few", "few", "several", "a couple",
                                               "a couple of", "couple of")
        lo, hi = (0.4, 2.2) if vague else (0.5, 1.8)
        return TimeRange(_day(today, n * unit * hi), _day(today, n * unit * lo) +
                         dt.timedelta(days=1), m.group(0))
    m = re.search(r"\b(?:a while (?:ago|back)|some time ago|recently|the other (day|week))\b", t)
    if m:
        if m.group(0).startswith("recently") or m.group(1):
            return TimeRange(_day(today, 30), today + dt.timedelta(days=1), m.group(0))
        return TimeRange(_day(today, 365), _day(today, 14), m.group(0))
    m = re.search(r"\b(last|this|earlier this) (week|month|year)\b", t)
    if m:
        span = m.group(2)
        if span == "week":
            start = today - dt.timedelta(days=today.weekday())
            if m.group(1) == "last":
                return TimeRange(start - dt.timedelta(days=7), start, m.group(0))
            return TimeRange(start, today + dt.timedelta(days=1), m.group(0))
        if span == "month":
            start = _month_start(today.year, today.month, tz)
            if m.group(1) == "last":
                return TimeRange(_month_start(today.year, today.month - 1, tz), start,
                                 m.group(0))
            return TimeRange(start, today + dt.timedelta(days=1), m.group(0))
        start = dt.datetime(today.year, 1, 1, tzinfo=tz)
        if m.group(1) == "last":
            return TimeRange(dt.datetime(today.year - 1, 1, 1, tzinfo=tz), start, m.group(0))
        return TimeRange(start, today + dt.timedelta(days=1), m.group(0))
    m = re.search(r"\b(last|this|in the|over the) (spring|summer|autumn|fall|winter)\b", t)
    if m:
        first, end_m = _SEASONS[m.group(2)]
        year = today.year
        if _month_start(year, first, tz) > today:
            year -= 1  # the most recent such season that has begun
        if m.group(1) == "last" and _month_start(year, end_m, tz) > today:
            year -= 1  # we are in it: "last" means the one before
        return TimeRange(_month_start(year, first - 1, tz), _month_start(year, end_m + 1, tz),
                         m.group(0))
    m = re.search(r"\b(?:in|during|back in|around|early|late|mid)[- ](" +
                  "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\b(?:\s+(\d{4}))?", t)
    if m:
        month = _MONTHS[m.group(1)]
        year = int(m.group(2)) if m.group(2) else (
            today.year if month <= today.month else today.year - 1)
        return TimeRange(_month_start(year, month, tz) - dt.timedelta(days=7),
                         _month_start(year, month + 1, tz) + dt.timedelta(days=7), m.group(0))
    m = re.search(r"\b(20\d\d)-(\d\d)-(\d\d)\b", t)
    if m:
        try:
            d = dt.datetime(int(m.group(1)), int(m.group(2)), int(m.group(3)), tzinfo=tz)
        except ValueError:
            return None
        return TimeRange(d - dt.timedelta(days=2), d + dt.timedelta(days=3), m.group(0))
    return None


# -- axes ----------------------------------------------------------------------------------

_STOP = set("""a an and are as at be been being but by can could did do does doing done don't
for from had has have having he her here him his how i i'm if in into is it it's its just
like me might more most my myself no nor not now of off on once one only or other our ours
out over own please same she should so some such than that the their them then there these
they this those through to too under until up very was we were what when where which while
who whom why will with would you your yours yes yeah ok okay also maybe think thought
remember recall recollect vaguely whole something thing things stuff time times session sessions
conversation conversations chat chats discussion talk talked talking few couple ago weeks
week days day months month year years last while back earlier recently other again about
around sort kind bit lot whatever anyway actually really quite sure know knew find found
look looking looked wanted want get got let us there's can't cannot don't didn't where's
that's what's one's thing's past work worked working did done show tell me once before
previously mean meant said say see seen saw wasn't weren't isn't aren't asked ask asking
works explained explain told tell made make went happened bit part kept keep got use used
using we'd we'll i'd i'll it'd after another each every any both either itself themselves
someone somebody anything anyone whose until since though although still even already
almost instead rather finally""".split())
_VAGUE_WORDS = re.compile(_VAGUE_TIME.pattern + r"|\b(?:yesterday|today|spring|summer|autumn|"
                          r"fall|winter|january|february|march|april|may|june|july|august|"
                          r"september|october|november|december)\b", re.I)
_PERSON = re.compile(r"\b(?:with|from|by|and|asked|told|for|like) ([A-Z][a-z]+)\b")
_EXT = (r"(?:py|js|ts|tsx|jsx|go|rs|rb|java|kt|swift|c|h|cc|cpp|hpp|cs|php|md|org|rst|toml|"
        r"yaml|yml|json|sql|sh|el|txt|cfg|ini|html|css|scss|lock|xml|proto|tf)")
_PATH = re.compile(r"(?:~|\.{1,2})?/?(?:[\w.-]+/)+[\w.-]+\." + _EXT + r"\b|"
                   r"(?:~|\.{1,2})?/(?:[\w.-]+/)+[\w.-]*|"
                   r"\b[\w-]+\." + _EXT + r"\b")
# Every character a _PATH match can hold; a match never crosses a run of them, and the
# character outside a run is not a word character, so \b reads the same run by run.
_PATH_RUN = re.compile(r"[\w.~/-]+")
_PATH_RUN_MAX = 1024  # a path in a message is far shorter; PATH_MAX itself is 4096 bytes


def _paths(text: str) -> list[re.Match[str]]:
    """_PATH.finditer(text), skipping runs longer than _PATH_RUN_MAX: tried at every
    position of a long run (``------…``), _PATH scans to the run's end and backtracks
    from each one, O(n^2); bounded runs make it linear (at most n * _PATH_RUN_MAX)."""
    return [m for run in _PATH_RUN.finditer(text) if run.end() - run.start() <= _PATH_RUN_MAX
            for m in _PATH.finditer(text, run.start(), run.end())]


def _without_paths(text: str) -> str:
    """``_PATH.sub(" ", text)`` over the same matches as :func:`_paths`."""
    out, at = [], 0
    for m in _paths(text):
        out += [text[at:m.start()], " "]
        at = m.end()
    return "".join(out) + text[at:]


_IDENT = re.compile(r"\b(?:[A-Z]+-\d+|#\d+|[0-9a-f]{7,40}|[a-z]+(?:_[a-z0-9]+)+|"
                    r"[a-z]+[A-Z][A-Za-z0-9]*|[A-Z][a-z]+[A-Z][A-Za-z0-9]*|[A-Z]{2,}\d*)\b")
_QUOTED = re.compile(r"(?<!\w)[\"“«']([^\"”»']{2,60})[\"”»'](?!\w)")
"""A quoted term; an apostrophe inside a word ("it's", "I'm") is no quote mark."""
_WORD = re.compile(r"[^\W\d_][\w'-]*", re.UNICODE)
_WHOLE_WORDS: list[tuple[str, re.Pattern[str]]] = [
    ("line", re.compile(r"\b(?:line of work|all the (?:work|sessions|commits|changes)|"
                        r"whole (?:migration|effort|project|thing|line|story|series)|"
                        r"across (?:sessions|weeks|months)|over (?:several|many|a few) "
                        r"(?:sessions|weeks|days)|the series|everything we did (?:on|for)|"
                        r"from start to finish|the saga|work stream|workstream|"
                        # several changes in a row: a quantity of them, the ones that came
                        # after, a span of time the work filled
                        r"(?:string|series|batch|bunch|run|sequence|round|wave|flurry|couple|"
                        r"handful|lot|pile|chain|set) of (?:[\w-]+ ){0,3}?(?:fixes|patches|"
                        r"commits|changes|PRs|pull requests|follow-?ups|tweaks|updates|"
                        r"cleanups|refactors|tests|polish)|"
                        r"(?:plus|and the|and all the|and some|and its|with the|with its) "
                        r"(?:[\w-]+ )?(?:follow-?ups|fixes|patches|tweaks|cleanups|tidying)|"
                        r"one (?:[\w-]+ )?after (?:another|the other)|"
                        r"the (?:stretch|period|phase|stint|spell|weeks|months) (?:where|when|"
                        r"in which))\b", re.I)),
    ("concept", re.compile(r"\b(?:the (?:idea|concept|principle|approach|rule|convention|"
                           r"decision|policy) (?:we|i) (?:settled|agreed|decided|landed)|"
                           r"(?:we|i) (?:settled on|agreed on|decided on|landed on)|"
                           r"settled (?:idea|approach|decision)|the concept)\b", re.I)),
    ("topic", re.compile(r"\b(?:everything (?:about|on)|all (?:my|our) (?:notes|thoughts) on|"
                         r"the topic|what (?:we|i) (?:had|have|worked out) on|the subject of|"
                         r"all about|back[- ]and[- ]forth|the (?:history|evolution) of|"
                         r"how (?:that|the|this|it)(?: [\w-]+){0,2} (?:evolved|developed|grew|"
                         r"changed over time))\b", re.I)),
    ("change", re.compile(r"\b(?:the|that|a|one) (?:commit|patch|pull request|PR|diff|"
                          r"change(?:set)?)\b(?! (?:to|in) (?:the )?(?:plan|idea|approach))",
                          re.I)),
    ("session", re.compile(r"\b(?:session|conversation|chat|discussion|the time (?:we|i)|"
                           r"the one (?:where|when)|one session)\b", re.I)),
]
_NEGATED = re.compile(r"\bnot (?:the|that|a|an) ([\w-]+(?: [\w-]+)?)|\bno,? not ([\w-]+)", re.I)
_PLACE = re.compile(r"\b(?:in|under|check|look in|search) (~?/[\w./-]+)", re.I)


_PR = re.compile(r"\b(?:PR|pull request|merge request|MR|issue|ticket)s?\s*(?:number\s+|"
                 r"no\.?\s*|#)?(\d{1,6})\b", re.I)


def pr_numbers(text: str) -> list[str]:
    """``#N`` for every "PR N" / "pull request number N" / "issue #N" in ``text``: how a
    commit subject or body spells the same reference."""
    return list(dict.fromkeys(f"#{m.group(1)}" for m in _PR.finditer(text)))


VERSION = re.compile(r"(?<![\w.])v?(\d+(?:\.\d+)+)(?:-?((?:rc|alpha|beta|pre|b|a)\.?\d*))?"
                     r"(?![\w.]*\d)", re.I)
"""A version number as people and commit subjects write it: ``1.0``, ``v2.3.0``,
``1.1.0-rc1``."""


def version_key(number: str, suffix: str | None = None) -> str:
    """A version number compared as releases are: trailing zero parts dropped ("1.0",
    "v1.0.0" and "1.0.0" are one release), a pre-release suffix kept ("1.1.0-rc1" is not
    "1.1")."""
    parts = number.lower().lstrip("v").split(".")
    while len(parts) > 2 and parts[-1].strip("0") == "":
        parts.pop()
    return ".".join(str(int(p)) for p in parts) + (f"-{suffix.lower()}" if suffix else "")


def versions(text: str) -> list[str]:
    """The version numbers ``text`` names, as :func:`version_key`s."""
    return list(dict.fromkeys(version_key(m.group(1), m.group(2))
                              for m in VERSION.finditer(text)))


def _without_dates(text: str, now: dt.datetime) -> str:
    """``text`` without its dated phrases ("late March 2020"): they are the time axis,
    not words to search for."""
    from .dates import dated_phrases

    low = text.lower()
    if len(low) != len(text):  # a case change that moves offsets: leave the text whole
        return text
    for p in reversed(dated_phrases(low, now)):
        text = text[:p.at] + " " + text[p.at + len(p.phrase):]
    return text


def without_time_words(text: str) -> str:
    """``text`` with its vague time phrases taken out (records do not say "a few weeks
    ago"): what the semantic reading embeds."""
    return " ".join(_VAGUE_WORDS.sub(" ", text).split())


def terms_of(text: str) -> list[str]:
    """Content words of ``text`` (stop words, vague-time words dropped), in order, unique."""
    out: list[str] = []
    seen: set[str] = set()
    for w in _WORD.findall(_VAGUE_WORDS.sub(" ", text)):
        lw = w.lower().strip("'-")
        if len(lw) < 2 or lw in _STOP or lw in seen:
            continue
        seen.add(lw)
        out.append(lw)
    return out


def whole_of(text: str) -> str | None:
    for name, rx in _WHOLE_WORDS:
        if rx.search(text):
            return name
    return None


def read_cue(person_turns: list[str], now: dt.datetime) -> Cue:
    """The cue read afresh from every person turn of this recall (latest last). Later
    turns win where they contradict: the latest whole named, the latest time named; terms
    accumulate; "not the X" excludes X."""
    whole = "session"
    time: TimeRange | None = None
    axes: list[Axis] = []
    excluded: list[str] = []
    places: list[str] = []
    seen: set[tuple[str, str]] = set()

    def add(kind: str, value: str) -> None:
        key = (kind if kind != "term" else "t", value.lower())
        if value and key not in seen and value.lower() not in excluded:
            seen.add(key)
            axes.append(Axis(kind, value))

    for text in person_turns:
        named = whole_of(text)
        if named:
            whole = named
        t = resolve_time(text, now)
        if t:
            time = t
        for m in _NEGATED.finditer(text):
            for w in terms_of(m.group(1) or m.group(2) or ""):
                excluded.append(w)
        for m in _PLACE.finditer(text):
            places.append(m.group(1))
        text_wo_places = _PLACE.sub(" ", text)
        for m in _QUOTED.finditer(text_wo_places):
            add("coined", m.group(1).strip())
        for m in _paths(text_wo_places):
            add("artifact", m.group(0))
        for m in _PERSON.finditer(text_wo_places):
            if m.group(1).lower() not in _STOP and m.group(1) not in calendar.month_name:
                add("person", m.group(1))
        for ref in pr_numbers(text_wo_places):
            add("identifier", ref)  # "PR number 200" is "#200" in a commit's words
        for ver in versions(_without_dates(text_wo_places, now)):
            add("version", ver)  # "its first 1.0" is the subject's "v1.0.0"
        for m in _IDENT.finditer(text_wo_places):
            if m.group(0).lower() not in _STOP and not _PATH.fullmatch(m.group(0)) and \
                    not any(a.kind == "artifact" and m.group(0) in a.value for a in axes):
                add("identifier", m.group(0))
        for w in terms_of(_NEGATED.sub(" ", _without_paths(_without_dates(text_wo_places,
                                                                          now)))):
            if w not in excluded and not any(a.value.lower() == w for a in axes):
                add("term", w)
    axes = [a for a in axes if a.value.lower() not in excluded]
    if time:
        axes.insert(0, Axis("time", time.phrase, time))
    meant = " / ".join(t.strip() for t in person_turns if t.strip())
    undone = any(_UNDONE.search(t) for t in person_turns)
    return Cue(meant=meant, whole=whole, axes=axes, excluded=excluded, places=places,
               undone=undone)


_UNDONE = re.compile(r"\b(?:revert(?:ed|ing|s)?|undo(?:ne|ing|es)?|undid|back(?:ed|ing)? (?:it |"
                     r"that |them )?out|took (?:it|that|them) back|taken back|roll(?:ed|ing)? "
                     r"(?:it |that )?back|rollback)\b", re.I)
