"""GTD slots from one clause: dates and times, SCHEDULED vs DEADLINE, repeaters, priority,
tags, effort, state changes, a note, a date shift, and what is left as the entry's title.

Each extractor finds a span of the clause by the *form* of the words (a date, a duration, a
repeater), fills its slot and marks the span; the title is the clause with the marked spans
and the request wrapper ("remind me to", "put … on my list") removed and nothing else.
Everything is relative to a given ``now``; no I/O, no model.  Dates and times themselves
are read by :mod:`.gtd_dates`.
"""

from __future__ import annotations

import calendar
import datetime as dt
import functools
import re
from dataclasses import dataclass, field

from .. import regex_cache
from ..textscan import next_of
from .gtd_dates import (
    _DL_CUE,
    _NUM_RE,
    _ORD,
    _UNIT,
    _WD_RE,
    DATE_RE,
    WD,
    _num,
    add_months,
    coming,
    parse_time,
    resolve_day,
)

__all__ = ["PLACE_WORDS", "Slots", "base_verbs", "parse_clause", "past_verb", "place_tag",
           "resolve_day", "stem", "words"]


@dataclass
class Slots:
    """What one clause asks for (None: the clause says nothing about it)."""

    title: str = ""
    scheduled: dt.date | dt.datetime | None = None
    deadline: dt.date | dt.datetime | None = None
    repeater: str | None = None
    repeat_on: str | None = None
    """``scheduled`` or ``deadline``: which date the repeater belongs to."""
    shift: tuple[int, str] | None = None
    """Move an existing date by (n, unit d/w/m/y); n < 0 brings it forward."""
    shift_kind: str | None = None
    priority: str | None = None
    """A, B, C, or ``none`` (remove)."""
    tags: list[str] = field(default_factory=list)
    effort: str | None = None
    """Org duration H:MM."""
    state: str | None = None
    """A TODO keyword asked for (DONE, CANCELLED, WAITING, NEXT, TODO)."""
    note: str | None = None
    capture_cue: bool = False
    """An explicit request to record something new (remind me, jot down, add …)."""
    weak_cue: bool = False
    """I have to / I need to / I should: new, unless it names an existing task."""
    ref_verb: str | None = None
    """A verb acting on an existing item (mark, move, push, tag, cancel…)."""
    past: bool = False
    """The clause reports something finished in the past tense (watered, sent…)."""
    wants_deadline: bool = False
    """The clause names the deadline ("push the deadline", "due date")."""
    subject: str | None = None
    """The subject of a state report ("the X task is waiting on …"): the entry it names."""
    ref_text: str = ""
    """The words naming the item (the title minus request/ref verbs)."""
    refs: list[str] = field(default_factory=list)
    """Other phrases that may name an existing entry, best first: the subject of a
    statement ("the tap washer can't happen before the 20th"), what time is set aside for
    ("block out friday for the tax return"), the object of an intention ("I'll deal with
    the restic report on thursday")."""
    obliged: bool = False
    """The clause says what must still be done ("has to be bought by the 18th", "needs
    paying"): a participle there reports nothing finished."""
    arrived: bool = False
    """The clause reports that something came (arrived, replied, sent, refunded…): what
    ends a wait — on a WAITING entry it means done."""
    spans: list[tuple[int, int]] = field(default_factory=list)

    def changes(self) -> bool:
        return any(v is not None for v in (self.scheduled, self.deadline, self.repeater,
                                           self.shift, self.priority, self.effort,
                                           self.state, self.note)) or bool(self.tags)


# -- words -----------------------------------------------------------------------------
STOP = frozenset("""a an and as at be by for from in into is it its it's of on or the to with
my me i i'm i'd i've im id mine please that this those these one ones thing things stuff
task tasks todo item items entry so then just also all any some about up out over off
should would will shall must can could need needs have has had got get do does did done
still really actually now again too very much more just that's thats there their they them
not after doing going anymore anyway i'll we'll you'll it'll let's
him her his she he we us our you your yours was were been being am are
""".split())


@functools.lru_cache(maxsize=1 << 16)  # every request stems every title: words repeat
def stem(w: str) -> str:
    """A crude English stem: enough that iterators/iterator, watered/water, one-pager/
    one-page and migration/migrate meet."""
    w = w.lower().strip("'’")
    w = re.sub(r"['’]s$", "", w)
    for _ in range(3):  # to a fixed point, so watered -> water -> wat meets water -> wat
        if len(w) <= 3 or w.isdigit():
            return w
        before = w
        for suf in ("ments", "ment", "ations", "ation", "ates", "ated", "ate", "ings", "ing", "ions", "ion",
                    "ers", "er", "ed", "es", "s", "e", "y", "ly"):
            if w.endswith(suf) and len(w) - len(suf) >= 3:
                w = w[: -len(suf)]
                break
        if len(w) > 3 and w[-1] == w[-2] and w[-1] not in "aeiou":  # planned -> plan
            w = w[:-1]
        if w == before:
            break
    return w


def words(text: str, *, keep_stop: bool = False) -> list[str]:
    """Stemmed content words (hyphenated words also give their parts)."""
    out: list[str] = []
    toks = [t.strip(".") for t in re.findall(r"[\w][\w'’.-]*[\w]|\w", text.lower())]
    for i, tok in enumerate(toks):
        parts = [tok] + ([*tok.split("-"), tok.replace("-", "")] if "-" in tok else [])
        if i + 1 < len(toks) and toks[i + 1] in _PARTICLES:
            parts.append(tok + toks[i + 1])  # "set up" meets "setup", "back up" "backup"
        for p in parts:
            if p and (keep_stop or p not in STOP):
                out.append(stem(p))
    return out


_PARTICLES = frozenset("up out off over down in".split())

PLACE_WORDS = {"house": ("home",), "flat": ("home",), "apartment": ("home",),
               "household": ("home",), "garden": ("home", "garden"), "office": ("work",),
               "job": ("work",), "shop": ("errand", "errands"), "shops": ("errand", "errands"),
               "store": ("errand", "errands"), "town": ("errand", "errands"),
               "computer": ("@computer", "computer"), "laptop": ("@computer", "computer"),
               "phone": ("@phone", "phone", "calls"), "calls": ("@phone", "phone", "calls")}
"""Everyday place words and the context tags a GTD memex names them by ("around the house"
-> home, "in town" -> errand): used only when the memex has that tag."""


def place_tag(word: str, known: frozenset[str] | set[str] | dict[str, str]) -> str | None:
    """The memex tag a place word stands for, or None (``known``: its tags, or stem -> tag)."""
    for t in PLACE_WORDS.get(word.lower(), ()):
        if isinstance(known, dict):
            if (hit := known.get(stem(t.lstrip("@")))) and hit.lstrip("@") == t.lstrip("@"):
                return hit
        elif t in known:
            return t
    return None


# -- the other slots ---------------------------------------------------------------------
_REPEAT_RE = regex_cache.compile(
    r"\b(?:every\s+other\s+(?P<other>day|week|month|year)"
    rf"|(?:every|each)\s+(?P<n>{_NUM_RE})\s+(?P<nu>day|week|month|year)s"
    r"|(?:every|each)\s+(?P<wk>weekday|work\s*day|working\s+day|business\s+day)"
    r"(?:\s+(?:morning|afternoon|evening|night)s?)?"
    r"|(?:every|each)\s+(?P<one>day|week|month|year|morning|evening|night|fortnight|quarter)"
    r"(?!\s+on\s+the\s+(?:\d|first|last))"
    rf"|(?P<lyw>weekly|fortnightly|biweekly)\s+on\s+(?P<lywd>{_WD_RE})s?\b"
    r"|(?P<ly>daily|nightly|weekly|fortnightly|biweekly|monthly|quarterly|yearly|annually)"
    r"(?=\s*(?:$|[,.;!?]|(?:on|at|from|starting|until|in|for|and|then)\b))"
    rf"|(?:every|each)\s+(?P<wn>other|second|2nd|third|3rd|fourth|4th|{_NUM_RE})\s+"
    rf"(?P<wdn>{_WD_RE})s?(?:\s+(?:morning|afternoon|evening|night)s?)?"
    r"(?!\s+(?:of|in)\s+(?:the|every|each)\s+month)"
    rf"|(?:every|each)\s+(?P<wd>{_WD_RE})s?(?:\s+(?:morning|afternoon|evening|night)s?)?"
    rf"|(?:on\s+)?(?P<wdp>{_WD_RE})s(?:\s+(?:morning|afternoon|evening|night)s?)?"
    rf"|(?:on\s+)?(?P<wdq>{_WD_RE})\s+(?:morning|afternoon|evening|night)s"
    r"|(?:on\s+)?the\s+(?P<ord>first|second|third|fourth|fifth|last|\d{1,2}(?:st|nd|rd|th))"
    r"\s+(?:day\s+)?of\s+(?:every|each|the)\s+month"
    r"|(?:every|each)\s+month\s+on\s+the\s+(?P<ord2>\d{1,2}(?:st|nd|rd|th)|first|last)(?:\s+day)?"
    rf"|(?:every|each)\s+(?P<mord>first|1st|second|2nd|third|3rd|fourth|4th|last)\s+"
    rf"(?P<mwd>{_WD_RE})\s+(?:of|in)\s+(?:every|each|the)\s+month"
    rf"|(?:on\s+)?(?:the\s+)?(?P<mord2>first|1st|second|2nd|third|3rd|fourth|4th|last)\s+"
    rf"(?P<mwd2>{_WD_RE})\s+(?:of|in)\s+(?:every|each)\s+month"
    r"|(?:every|each)\s+(?P<ord3>first|last|\d{1,2}(?:st|nd|rd|th))\s+(?:day\s+)?of\s+(?:the|each|"
    r"every)\s+month"
    r"|(?:every|each)\s+(?P<nth>other|2nd|second|3rd|third|4th|fourth)\s+(?P<nu2>day|week|month|year))\b",
    re.I)
_HEDGE = (r"(?:(?:probably|maybe|perhaps|possibly|likely|about|around|roughly|approx(?:\.|imately)?|"
          r"circa|ca\.|~|≈|like|something\s+like|at\s+most|at\s+least|under|over|up\s+to|"
          r"no\s+more\s+than|less\s+than|more\s+than|close\s+to|nearly|almost|just\s+(?:over|"
          r"under)|a\s+(?:good|solid|bit\s+over|bit\s+under|little\s+over|little\s+under)|"
          r"give\s+or\s+take|say|est\.?|only|just)\s*)")
"""The hedges a person puts before an estimate ("probably", "about", "~", "maybe", "roughly",
"say", "up to"), any number of them ("probably about an hour"): the estimate is kept, the
hedge is dropped (Org's Effort holds one duration)."""
_HEDGE_AFTER = (r"(?:\s*-?ish\b|,?\s+(?:or\s+so|or\s+thereabouts|give\s+or\s+take|tops|max|at\s+most|"
                r"at\s+the\s+most|or\s+less|or\s+more|roughly|approx(?:imately)?|of\s+work|each))*")
"""What may follow an estimate ("or so", "tops", "-ish", "give or take")."""
_DUR = (r"(?:half\s+an?\s+hour|an?\s+half[- ]hour|an?\s+hour\s+and\s+a\s+half|"
        rf"{_NUM_RE}\s*(?:and\s+a\s+half\s+)?(?:hours?|hrs?|h)\b(?:\s+(?:and\s+)?{_NUM_RE}\s*"
        rf"(?:minutes?|mins?|m)\b)?|{_NUM_RE}\s*(?:minutes?|mins?|m)\b)")
_EFFORT_RE = regex_cache.compile(
    r"(?:\b(?:should|will|would|might|may|could|it'?ll|it\s+will|going\s+to|gonna)\s+)?"
    rf"(?:{_HEDGE}*)"
    r"(?:\b(?:take|takes|taking|need|needs|last|lasts|be|is|'s)\s+(?:me\s+|us\s+)?|"
    r"\b(?:effort|estimate[ds]?|est\.?|budget)\s*(?:of|is|at|:|to)?\s*)"
    rf"{_HEDGE}*"
    rf"(?P<dur>{_DUR}|\d+:\d\d\s*(?:hours?|h)?)"
    rf"{_HEDGE_AFTER}", re.I)
_EFFORT_BARE = regex_cache.compile(
    rf"(?:^|\s*[,;(\u2014\u2013]|\s+-|\s+(?=[~≈]))\s*{_HEDGE}*"
    rf"(?P<dur>{_DUR}){_HEDGE_AFTER}\s*\)?\s*[.!]?$"
    rf"|[,;(\u2014\u2013]\s*{_HEDGE}*(?P<dur3>{_DUR}){_HEDGE_AFTER}(?:\s*\)|\s*(?=[,;\u2014\u2013]))"
    r"|(?:,\s*|\b)(?:(?:it'?s|it\s+is|that'?s|should\s+be|will\s+be|would\s+be|is|"
    r"probably|maybe|just)\s+)*"
    rf"(?:an?\s+|one\s+)?(?P<dur2>{_NUM_RE}[- ](?:minute|min|hour|hr))s?\s+"
    r"(?:job|task|thing|chore|errand)\b", re.I)
"""A duration that stands alone in the clause ("descale the kettle, twenty minutes",
"fix the gate (~2h)", "a ten-minute job"): the effort — never a day offset, which says
"in" ("in twenty minutes")."""
_EFFORT_FOR = regex_cache.compile(
    r"(?:\b(?:set|put|make|change)\s+)?(?:the\s+|an?\s+)?\b(?:effort|estimate|time\s+estimate)\s+"
    r"(?:for|on|of)\s+(?P<ref>.+?)\s+(?:to|at|as|is|=)\s+(?:about\s+|around\s+)?"
    r"(?P<dur>half\s+an?\s+hour|an?\s+hour\s+and\s+a\s+half|"
    rf"{_NUM_RE}\s*(?:hours?|hrs?|h|minutes?|mins?|m)\b(?:\s+(?:and\s+)?{_NUM_RE}\s*"
    r"(?:minutes?|mins?|m)\b)?|\d+:\d\d)", re.I)
_EFFORT_POST = regex_cache.compile(
    r"(?:\b(?:add|set|put|give|log)\s+)?(?:an?\s+)?(?:effort\s+of\s+)?(?P<dur>half\s+an?\s+hour|"
    rf"an?\s+hour\s+and\s+a\s+half|{_NUM_RE}\s*(?:hours?|hrs?|h|minutes?|mins?|m)\b)"
    r"\s+(?:of\s+)?(?:effort|estimated?|estimate)\b(?:\s+(?:to|on|for)\b)?", re.I)
_PRIO_RE = regex_cache.compile(
    r"\b(?:(?:as|at|with|a|an|to)\s+)?(?P<lvl>high(?:est)?|top|urgent|important|critical|"
    r"medium|normal|mid|low(?:est)?)(?:[- ]priority|\s+prio)\b"
    r"|\bpriority\s+(?:to\s+|of\s+|is\s+)?(?P<lvl2>a|b|c|high|medium|low)\b"
    r"|\b(?:(?:as|at|to|an?)\s+)?(?P<lvl3>a|b|c)[- ]priority\b"
    r"|\[#(?P<lvl4>[abc])\]"
    r"|\b(?P<none>no|remove\s+the|drop\s+the|clear\s+the)\s+priority\b"
    r"|(?:,\s*|\b(?:it'?s|this\s+is|that'?s|is|are)\s+(?:now\s+|really\s+|very\s+)?)"
    r"(?P<urg>urgent|top\s+priority|important|critical)\b"
    r"|^(?P<urg2>urgent)\s*[:,-]?", re.I)
_PRIO_COMPLEMENT = regex_cache.compile(
    r"\s(?:as\s+|to\s+)?(?:(?:more|very|really|super)\s+)?(?P<w>urgent|important|critical|"
    r"high(?:er)?|top|(?:less\s+)(?:urgent|important)|low(?:er)?|medium|normal)\s*[.!]?$", re.I)
""""make X urgent", "mark X as important", "set X to low": the level is the verb's
complement (only after a verb that acts on an item)."""
_PRIO_MAP = {"high": "A", "highest": "A", "top": "A", "urgent": "A", "important": "A",
             "critical": "A", "medium": "B", "normal": "B", "mid": "B", "low": "C",
             "lowest": "C", "a": "A", "b": "B", "c": "C", "higher": "A", "lower": "C",
             "less": "C"}
_TAG_RE = regex_cache.compile(
    r"(?:(?<=\s)|^)#(?P<hash>[A-Za-z][\w-]*)"
    r"|(?:(?<=\s)|^)(?P<at>@[A-Za-z][\w-]*)"
    r"|\b(?:and\s+)?tag(?:ged|\s+(?:it|this|that|them))?\s+(?:as\s+|with\s+)?(?P<tag>[\w@-]+"
    r"(?:\s*(?:,|and)\s*[\w@-]+)*)"
    r"|\b(?:an?|the)\s+(?P<tag2>[\w@-]+)\s+tag\b", re.I)
_NOTE_RE = regex_cache.compile(
    r"^(?:please\s+)?(?:add|append|put|attach|write|jot)\s+(?:a\s+|this\s+|the\s+)?"
    r"(?:note|comment|remark)s?\s+(?:to|on|under|for)\s+(?P<ref>.+?)\s*(?::|—|–|\s-\s|,\s*(?:saying|that))\s*(?P<note>.+)$"
    r"|^(?:please\s+)?(?:add|append|put|attach|write|jot|leave)\s+(?:a\s+|this\s+|the\s+)?"
    r"(?:note|comment|remark)s?\s+(?:to|on|under|for)\s+(?P<ref4>.+?\b(?:task|one|item|entry|"
    r"thing|todo))\s+(?:that|saying|to\s+say)\s+(?P<note4>.+)$"
    r"|^(?:note|comment)\s+(?:on|for)\s+(?P<ref2>.+?)\s*[:—–]\s*(?P<note2>.+)$"
    r"|^(?:please\s+)?(?:add|append)\s+to\s+(?P<ref3>.+?)\s*(?::|\bthat\b)\s*(?P<note3>.+)$",
    re.I | re.S)
_SHIFT_RE = regex_cache.compile(
    rf"\b(?P<dir>back|out|forward|ahead|earlier|later)?\s*by\s+(?P<n>{_NUM_RE})\s+"
    r"(?P<u>day|week|month|fortnight)s?\b(?:\s+(?P<dir2>later|earlier|back|forward))?"
    rf"|\b(?P<n2>{_NUM_RE})\s+(?P<u2>day|week|month)s?\s+(?P<dir3>later|earlier)\b", re.I)

_STATE_RULES: list[tuple[str, re.Pattern[str]]] = [
    ("WAITING", regex_cache.compile(r"\bwaiting\s+(?:on|for|to\s+hear)\b|\bon\s+hold\b|\bwaiting\s*[.!]?$|\b(?:as|to|on)\s+waiting\b|"
                           r"\bblocked\s+(?:on|by)\b|\bdelegated\s+(?:it\s+)?to\b|"
                           r"\bhanded\s+(?:it\s+|this\s+|that\s+)?(?:off|over)\s+to\b", re.I)),
    ("CANCELLED", regex_cache.compile(
        r"^(?:please\s+)?(?:cancel|scrap|ditch|abandon|kill|nix|shelve|bin|drop)\b(?!\s+(?:off|by|in)\b)|"
        r"\b(?:cancel(?:led|ed)?|scrapped|ditched|abandoned|dropped)\b(?!\s+(?:off|by)\b)|"
        r"\bforget\s+about\b|\b(?:gave|give|giving|given)\s+up\s+on\b|^(?:please\s+|just\s+|oh\s+|ok(?:ay)?\s+)?forget\s+(?:the|that|this|my)\b|\btake\s+.+?\s+off\s+(?:my|the)\s+(?:list|agenda|plate)\b|"
        r"^(?:please\s+)?(?:remove|delete)\b|\bno\s+longer\s+(?:need(?:ed)?|doing|happening|relevant)\b|"
        r"\b(?:won'?t|not\s+going\s+to|not\s+gonna)\s+(?:do|happen|bother)\b|"
        r"\bnothing\s+(?:left\s+)?to\s+\w+\s+(?:any\s*more|now)\b|"
        r"\b(?:is|are|'s|'re)\s+(?:now\s+|all\s+)?off\s*[.!]?$|"
        r"\b(?:isn'?t|is\s+not|aren'?t|are\s+not|won'?t|will\s+not)\s+(?:going\s+to\s+|gonna\s+)?"
        r"happen(?:ing)?\b(?!\s*(?:,\s*)?(?:before|until|till|this|next|today|tomorrow|in|on|"
        r"by|yet|now|any\s*time|soon)\b)|"
        r"\bnot\s+(?:doing|worth\s+doing)\b(?!\s+(?:it\s+)?(?:until|before|till))|"
        r"^(?:i'?m|i\s+am|we'?re|we\s+are)\s+not\s+(?:going\s+to|gonna)\s+.+?\b(?:after\s+all|"
        r"any\s*more|at\s+all)\s*[.!]?$|^(?:i|we)\s+(?:won'?t|will\s+not|don'?t\s+need\s+to)\s+"
        r".+?\b(?:after\s+all|any\s*more|at\s+all)\s*[.!]?$", re.I)),
    ("NEXT", regex_cache.compile(r"\b(?:as|to)\s+(?:a\s+|the\s+|my\s+)?next(?:\s+action)?\s*$|"
                        r"\b(?:is|'s|are)\s+(?:now\s+)?(?:my\s+|the\s+|a\s+)?next\s+(?:action|"
                        r"step|thing)s?\b|\b(?:is|'s|are)\s+(?:now\s+)?up\s+next\b|"
                        r"\bmake\s+.+?\s+(?:a|the|my)\s+next\s+action\b", re.I)),
    ("TODO", regex_cache.compile(r"\breopen\b|\bnot\s+(?:actually\s+)?done\b|\bmark\s+.+?\s+(?:as\s+)?"
                        r"(?:todo|open|undone|not\s+done)\b", re.I)),
    ("DONE", regex_cache.compile(
        r"\b(?:is|are|'s|'m|am|was|were|got|now|all|been)\s+(?:all\s+|now\s+|finally\s+)?(?:done|"
        r"finished|completed?|sorted(?:\s+out)?|handled|dealt\s+with|taken\s+care\s+of|"
        r"over\s+with)\b|^(?:i\s+)?(?:just\s+|finally\s+|already\s+)?(?:finished|completed|"
        r"done\s+with|wrapped\s+up|ticked\s+off|checked\s+off|crossed\s+off|knocked\s+out)\b|"
        r"\bmark(?:ed)?\s+.+?\s+(?:as\s+)?(?:done|complete(?:d)?|finished)\b|"
        r"\b(?:tick|check|cross)\s+(?:off\b|.+?\s+off\b)|^(?:done|finished|completed)\s*[:,-]",
        re.I)),
]
_REF_VERB = regex_cache.compile(
    r"^(?:please\s+|can\s+you\s+|could\s+you\s+)?(?P<v>mark|move|reschedule|postpone|push|"
    r"delay|bump|bring|pull|shift|defer|snooze|set|change|tag|untag|stick|put|label\s+it|prioriti[sz]e|"
    r"deprioriti[sz]e|make|give|schedule|cancel|scrap|ditch|drop|close|reopen|add\s+a\s+note|"
    r"append|flag)\b", re.I)
_STRONG_CAPTURE = regex_cache.compile(
    r"^(?:please\s+|hey\s+|ok(?:ay)?\s+|oh\s+and\s+|also\s+)?(?:can\s+you\s+|could\s+you\s+)?"
    r"(?P<w>(?:remind|nudge|ping|prompt)\s+me(?:\s+(?:to|that|about)\b)?"
    r"|don'?t\s+let\s+me\s+forget(?:\s+(?:to|about)\b)?"
    r"|make\s+sure\s+i\b(?:\s+(?:remember\s+to)\b)?|remember\s+to\b|note\s+to\s+self\s*[:,-]?"
    r"|(?:jot|write|note|put)\s+(?:this\s+|it\s+)?down\s*[:,-]?|capture(?:\s+this)?\s*[:,-]?"
    r"|(?:add|create|new)\s+(?:a\s+)?(?:task|todo|reminder|to-do)\s*(?:to|for|:)?"
    r"|to-?do\s*[:,-]|inbox\s*[:,-]|task\s*[:,-]|reminder\s*[:,-])\s*", re.I)
_ADD_CUE = regex_cache.compile(
    r"^(?:please\s+)?(?:can\s+you\s+|could\s+you\s+)?(?:add|capture|new)\s*[:,-]?\s+"
    r"(?!(?:(?:a|an|the|my|this|some|another)\s+)?(?:note|comment|tag|label|effort|estimate|"
    r"priority|deadline|due\s+date|date|time|repeater|reminder\s+to\s+the)s?\b|to\b|"
    rf"{_NUM_RE}\s+(?:minutes?|mins?|hours?|hrs?|days?|weeks?)\b|\d)", re.I)
""""add draft the agenda, tag it work": a new entry (a slot word after "add" acts on an
existing one: "add a note to X", "add an hour to X")."""
_LIST_WRAP = regex_cache.compile(
    r"^(?:please\s+)?(?:put|add|stick|throw|pop)\s+(?P<x>.+?)\s+(?:on|to|in|onto|into)\s+"
    r"(?:my|the)\s+(?:todo\s+|to-do\s+|task\s+)?(?:list|inbox|todos?|tasks|agenda)\b", re.I)
_TAIL_ADD = regex_cache.compile(r"\s*[,;.-]?\s*(?:please\s+)?(?:(?:add|capture|note|save|track|log)\s+"
                       r"(?:that|this|it)(?:\s+(?:for me|please|down|to my list))?|(?:put|stick|"
                       r"add|throw|pop)\s+(?:that|this|it)\s+(?:on|to|in|onto)\s+(?:my|the)\s+"
                       r"(?:todo\s+|to-do\s+|task\s+)?(?:list|inbox|todos?))\s*[.!]?\s*$", re.I)
_WEAK = regex_cache.compile(r"^(?P<w>(?:i\s+)?(?:still\s+|really\s+|also\s+)?(?:have\s+to|need\s+to|"
                   r"must|should|gotta|got\s+to|'ve\s+got\s+to|ought\s+to|want\s+to|"
                   r"must\s+remember\s+to|want\s+to\s+remember\s+to))\s+", re.I)
_ARRIVED = regex_cache.compile(
    r"\b(?:arrived|(?:came|come|got)\s+(?:back|in|through)|came|has\s+come|received|"
    r"heard\s+back|got\s+back\s+to\s+me|replied|responded|answered|delivered|showed\s+up|"
    r"turned\s+up|landed|sent|returned|refunded|reimbursed|(?:gave|brought|paid)\s+"
    r"(?:it|them|me|us)\s+back|paid\s+(?:me|us)|came\s+through|finally\s+here|is\s+here|"
    r"are\s+here)\b", re.I)
_IN_TIME = regex_cache.compile(
    rf"\bin\s+(?P<d>half\s+an?\s+hour|an?\s+hour\s+and\s+a\s+half|{_NUM_RE}\s*(?:and\s+a\s+half\s+)?"
    r"(?:hours?|hrs?|minutes?|mins?))\b(?:\s+(?:from\s+now|time))?", re.I)
"""A time counted from now ("remind me in an hour"): today's date with that time."""


def _in_minutes(d: str) -> int:
    e = _effort(d) or "0:00"
    h, m = e.split(":")
    return int(h) * 60 + int(m)


_SUBJECT_WAITS = regex_cache.compile(
    r"^(?:and\s+|so\s+|now\s+)?(?P<ref>(?:the|my|that|this|our)\s+.+?)\s+(?:is|are|'s|has\s+been|"
    r"have\s+been)\s+(?:still\s+|now\s+|currently\s+)?(?:waiting|blocked|stuck|on\s+hold)"
    r"(?:\s+(?:on|for|by|until)\s+(?P<who>.+?))?\s*[.!]?$", re.I)
""""the error handling task is waiting on Marco": the subject names an existing entry."""
_WAIT_LEAD = regex_cache.compile(r"^(?:i'?m\s+|i\s+am\s+|still\s+|now\s+)?(?:waiting|wait)\s+(?:on|for)\s+"
                        r"(?P<who>[A-Z][\w'-]*|the\s+[\w'-]+|my\s+[\w'-]+)"
                        r"(?:\s+(?P<link>to|for)\s+(?P<what>.+))?$", re.I)
""""waiting for the plumber to send the quote" -> "The plumber to send the quote";
"waiting on Sam for the logs" -> "Sam: the logs"."""
_ON_WEEKDAY = regex_cache.compile(rf"\b(?:on\s+)?(?P<wd>{_WD_RE})s?\b", re.I)
_NEGATED = regex_cache.compile(r"(?:\b(?:not|never|cannot|no)\b|n't\b)(?:\s+[\w'-]+){0,8}\s*$", re.I)
"""A negation just before "before"/"until" ("can't happen before the 20th", "won't start
until january", "not before friday"): the date is when the task may start, not its
deadline."""
_CAN_WAIT = regex_cache.compile(r"\b(?:can|could|will|'ll|should|may|might)\s+wait\b", re.I)
""""X can wait until monday": a new start date, not a deadline."""
_DEFER = {"snooze", "defer", "postpone", "reschedule", "move", "push", "delay", "bump", "shift"}
_PAST_TIME = regex_cache.compile(r"\b(?:some\s?time|at\s+some\s+point|last\s+(?:night|week|evening)|yesterday(?:\s+(?:morning|evening|"
                        r"afternoon))?|this\s+morning|earlier(?:\s+today)?|just\s+now|already)\b",
                        re.I)
IRREGULAR_PAST = {"did": "do", "made": "make", "sent": "send", "paid": "pay", "bought": "buy",
                  "wrote": "write", "took": "take", "gave": "give", "went": "go", "rang": "ring",
                  "got": "get", "found": "find",
                  "told": "tell", "sold": "sell", "built": "build", "ran": "run",
                  "brought": "bring", "threw": "throw", "swept": "sweep", "drove": "drive",
                  "met": "meet", "spoke": "speak", "won": "win", "kept": "keep"}


def base_verbs(text: str) -> str:
    """``text`` with each irregular past verb in its base form ("paid the rent" -> "pay the
    rent"): what a title names the task by."""
    return re.sub(r"[A-Za-z]+", lambda m: IRREGULAR_PAST.get(m.group(0).lower(), m.group(0)),
                  text)


def past_verb(word: str) -> str | None:
    """The stem of ``word`` when it is a past-tense verb form (watered -> water)."""
    w = word.lower()
    if w in IRREGULAR_PAST:
        return stem(IRREGULAR_PAST[w])
    if len(w) > 4 and w.endswith("ed") and w not in ("need", "seed", "feed", "speed", "bed",
                                                     "red", "shed", "bleed", "breed", "weed"):
        return stem(w)
    return None


# -- the parse -----------------------------------------------------------------------------
class _Marks:
    def __init__(self, text: str) -> None:
        self.text = text
        self.mask = [False] * len(text)

    def free(self, a: int, b: int) -> bool:
        return not any(self.mask[a:b])

    def take(self, a: int, b: int) -> None:
        for i in range(a, b):
            self.mask[i] = True

    def search(self, rx: re.Pattern[str]) -> re.Match[str] | None:
        for m in rx.finditer(self.text):
            if m.group(0).strip() and self.free(*m.span()):
                return m
        return None

    def rest(self) -> str:
        return "".join(" " if k else c for c, k in zip(self.text, self.mask, strict=True))


def _effort(dur: str) -> str | None:
    d = " ".join(dur.lower().split())
    if re.fullmatch(r"half\s+an?\s+hour|an?\s+half[- ]hour", d):
        return "0:30"
    if re.fullmatch(r"an?\s+hour\s+and\s+a\s+half", d):
        return "1:30"
    if m := re.fullmatch(r"(\d+):(\d\d)\s*(?:hours?|h)?", d):
        return f"{int(m.group(1))}:{m.group(2)}"
    mins = 0.0
    if m := re.search(rf"(?<!\w)({_NUM_RE})\s*(and\s+a\s+half\s+)?(?:hours?|hrs?|h)\b", d):
        mins += _num(m.group(1)) * 60 + (30 if m.group(2) else 0)
        d = d[m.end():]
    if m := re.search(rf"(?<!\w)({_NUM_RE})\s*(?:minutes?|mins?|m)\b", d):
        mins += _num(m.group(1))
    if mins <= 0:
        return None
    total = round(mins)
    return f"{total // 60}:{total % 60:02d}"


def _repeater(m: re.Match[str], today: dt.date) -> tuple[str, dt.date | None]:
    g = m.groupdict()
    if g["nth"]:
        n = {"other": 2, "2nd": 2, "second": 2, "3rd": 3, "third": 3, "4th": 4,
             "fourth": 4}[g["nth"].lower()]
        return f"+{n}{_UNIT[g['nu2'].lower()]}", None
    if g["wk"]:  # daily, from the next working day (Org repeats by interval only)
        return "+1d", today + dt.timedelta(days={5: 2, 6: 1}.get(today.weekday(), 0))
    if g["other"]:
        return f"+2{_UNIT[g['other'].lower()]}", None
    if g["n"]:
        return f"+{int(_num(g['n']))}{_UNIT[g['nu'].lower()]}", None
    if g["one"]:
        u = g["one"].lower()
        return ("+1d" if u in ("day", "morning", "evening", "night")
                else "+2w" if u == "fortnight" else "+3m" if u == "quarter"
                else f"+1{_UNIT[u]}"), None
    if g["mord"] or g["mord2"]:  # "the first monday of every month": from its next one,
        # monthly (Org's repeaters count months by day number: later ones may need a nudge)
        from .gtd_dates import _nth_in_month

        n = _ORD[(g["mord"] or g["mord2"]).lower()]
        for k in (0, 1, 2):
            base = add_months(today.replace(day=1), k)
            d = _nth_in_month(base.year, base.month, n, g["mwd"] or g["mwd2"])
            if d is not None and d >= today:
                return "+1m", d
        return "+1m", None
    if g["lyw"]:  # "biweekly on fridays": that weekday, every one or two weeks
        n = 1 if g["lyw"].lower() == "weekly" else 2
        return f"+{n}w", coming(today, [w[:3] for w in WD].index(g["lywd"].lower()[:3]),
                                strict=False)
    if g["ly"]:
        u = g["ly"].lower()
        return {"daily": "+1d", "nightly": "+1d", "weekly": "+1w", "fortnightly": "+2w",
                "biweekly": "+2w", "monthly": "+1m", "quarterly": "+3m", "yearly": "+1y",
                "annually": "+1y"}[u], None
    if g["wn"]:  # "every other wednesday", "every 3rd friday": that weekday, n weeks apart
        n = {"other": 2, "second": 2, "2nd": 2, "third": 3, "3rd": 3, "fourth": 4,
             "4th": 4}.get(g["wn"].lower()) or int(_num(g["wn"]))
        return f"+{n}w", coming(today, [w[:3] for w in WD].index(g["wdn"].lower()[:3]),
                                strict=False)
    wd = g["wd"] or g["wdp"] or g["wdq"]
    if wd:
        return "+1w", coming(today, [w[:3] for w in WD].index(wd.lower()[:3]), strict=False)
    o = (g["ord"] or g["ord2"] or g["ord3"] or "").lower()
    day = _ORD.get(o) or int(re.sub(r"\D", "", o) or 1)
    for k in (0, 1, 2):
        base = add_months(today.replace(day=1), k)
        last = calendar.monthrange(base.year, base.month)[1]
        d = base.replace(day=last if day == -1 else min(day, last))
        if d >= today:
            return "+1m", d
    return "+1m", None


def _next_occurrence(today: dt.date, repeater: str, *, weekdays: bool) -> dt.date:
    """The repeat after today's (whose time has passed): the next working day, a week on
    for a weekly one, else tomorrow."""
    if weekdays:
        return today + dt.timedelta(days={4: 3, 5: 2}.get(today.weekday(), 1))
    if repeater.endswith("w"):
        return today + dt.timedelta(days=7 * int(re.sub(r"\D", "", repeater) or 1))
    return today + dt.timedelta(days=1)


def parse_clause(text: str, now: dt.datetime, *, known_tags: frozenset[str] = frozenset(),
                 week_start: int = 0) -> Slots:
    """Every slot of ``text`` (one clause), relative to ``now``."""
    s = Slots()
    t = " ".join(text.replace("’", "'").split())
    today = now.date()
    if m := _NOTE_RE.match(t):
        s.note = (m.group("note") or m.group("note2") or m.group("note3")
                  or m.group("note4")).strip()
        ref = (m.group("ref") or m.group("ref2") or m.group("ref3") or m.group("ref4")).strip()
        s.ref_verb = "note"
        s.ref_text = ref
        s.title = ref
        return s
    mk = _Marks(t)
    if m := _STRONG_CAPTURE.match(t):
        s.capture_cue = True
        mk.take(*m.span())
    if not s.capture_cue and (m := _ADD_CUE.match(t)):
        s.capture_cue = True
        mk.take(*m.span())
    if m := _LIST_WRAP.match(t):
        s.capture_cue = True
        if m.group("x").lower() in ("it", "this", "that", "these", "those"):
            mk.take(*m.span())  # "put this on my list: …"
        else:
            mk.take(m.start(), m.start("x"))
            mk.take(m.end("x"), m.end())
    if m := _TAIL_ADD.search(t):
        s.capture_cue = True
        mk.take(*m.span())
    said_state = ""
    for name, rx in _STATE_RULES:
        if m := rx.search(t):
            s.state = name
            said_state = m.group(0).strip()
            break
    if s.state == "WAITING" and (m := _SUBJECT_WAITS.match(t)):
        s.subject = m.group("ref").strip()
    if m := _REF_VERB.match(t):
        s.ref_verb = m.group("v").lower()
    elif m := re.search(r"\b(?:moved|pushed|postponed|rescheduled|bumped|shifted|delayed)\b",
                        t, re.I):
        s.ref_verb = "move"  # "the X deadline moved to friday"
    s.wants_deadline = bool(re.search(r"\b(?:deadline|due\s+date)\b", t, re.I))
    s.arrived = bool(_ARRIVED.search(t))
    # repeaters first: "every tuesday" is not a one-off "tuesday"
    rep_m = mk.search(_REPEAT_RE)
    if m := rep_m:
        s.repeater, first = _repeater(m, today)
        mk.take(*m.span())
        if first is None and s.repeater == "+1w" and (d := mk.search(_ON_WEEKDAY)):
            # "weekly on mondays" / "every week on friday": the weekday is the first date
            first = coming(today, [w[:3] for w in WD].index(d.group("wd").lower()[:3]),
                           strict=False)
            mk.take(*d.span())
        if first is not None:
            s.scheduled = first
    if m := _EFFORT_FOR.search(t):
        if (e := _effort(m.group("dur"))) and mk.free(*m.span()):
            s.effort = e
            s.ref_verb = "effort"  # "set the effort for X to …" names an existing entry
            mk.take(m.start(), m.start("ref"))
            mk.take(m.end("ref"), m.end())
    if s.effort is None and (m := _EFFORT_POST.search(t)) and mk.free(*m.span()):
        if e := _effort(m.group("dur")):
            s.effort = e
            s.ref_verb = s.ref_verb or "set"
            mk.take(*m.span())
    if s.effort is None and (m := mk.search(_EFFORT_RE)):
        if e := _effort(m.group("dur")):
            s.effort = e
            mk.take(*m.span())
    if s.effort is None and (m := mk.search(_EFFORT_BARE)):
        if e := _effort((m.group("dur") or m.group("dur2") or m.group("dur3")).replace("-", " ")):
            s.effort = e
            mk.take(*m.span())
    if m := mk.search(_SHIFT_RE):
        n = int(_num(m.group("n") or m.group("n2")))
        u = _UNIT[(m.group("u") or m.group("u2")).lower()]
        way = (m.group("dir") or m.group("dir2") or m.group("dir3") or "").lower()
        s.shift = (-n if way in ("forward", "ahead", "earlier") else n, u)
        mk.take(*m.span())
    # times, then days (a time binds to the day it is said with)
    tm = None
    sched_cue = False
    until = False  # a date said with "until": a deadline, unless the verb defers
    if m := mk.search(_IN_TIME):  # "in an hour", "in 20 minutes": a time from now
        s.scheduled = (now + dt.timedelta(minutes=_in_minutes(m.group("d")))).replace(
            second=0, microsecond=0)
        mk.take(*m.span())
    m_t = parse_time(mk.rest(), context=text)
    if m_t:
        tm, span = m_t
        mk.take(*span)
    for m in list(DATE_RE.finditer(mk.rest())):
        if not mk.free(*m.span()):
            continue
        cue = (m.group("cue") or m.group("mcue") or m.group("hcue") or "").lower()
        phrase = m.group("day") or m.group("month") or m.group("holiday")
        day = resolve_day(phrase, now, week_start)
        if day is None:
            continue
        mk.take(*m.span())
        is_dl = bool(re.fullmatch(_DL_CUE, cue, re.I)) if cue else False
        if re.match(r"(?:in|into|to|for)$", cue) and m.group("month"):
            is_dl = False
        if cue in ("until", "til", "till") and s.scheduled is None:
            is_dl = True
            until = True
        if is_dl and cue in ("before", "until", "til", "till") and \
                _NEGATED.search(mk.text, max(0, m.start() - 60), m.start()):
            is_dl, until = False, False  # "can't happen before the 20th": the earliest start
            sched_cue = True
        when: dt.date | dt.datetime = day
        if tm is not None and (s.scheduled is None or is_dl is False):
            when = dt.datetime.combine(day, tm)
            tm = None
        if cue and not is_dl:
            sched_cue = True
        if is_dl:
            s.deadline = when
        else:
            s.scheduled = when
    if s.scheduled is not None and s.deadline is None and not s.repeater and not sched_cue \
            and re.search(r"\b(?:deadline|due)\b", t, re.I):
        s.deadline, s.scheduled = s.scheduled, None  # "the deadline for X is friday"
    defer = s.ref_verb in _DEFER or bool(_CAN_WAIT.search(t))
    if defer and until and s.deadline is not None and s.scheduled is None \
            and not s.wants_deadline:
        s.scheduled, s.deadline = s.deadline, None  # "snooze X until monday": a new start
    if tm is not None:  # a time with no day: today, or the repeater's day
        base = s.scheduled if isinstance(s.scheduled, dt.date) else None
        day0 = base if base is not None and not isinstance(base, dt.datetime) else today
        if base is None and dt.datetime.combine(today, tm) < now:
            day0 = today + dt.timedelta(days=1)
        elif s.repeater and day0 == today and dt.datetime.combine(today, tm) < now:
            day0 = _next_occurrence(today, s.repeater, weekdays=bool(rep_m and rep_m["wk"]))
        s.scheduled = dt.datetime.combine(day0, tm)
    elif s.scheduled is None and s.deadline is None and re.search(r"\btonight\b", t, re.I):
        s.scheduled = today
    if s.repeater:
        s.repeat_on = "deadline" if s.deadline is not None and s.scheduled is None \
            else "scheduled"
        if s.repeat_on == "scheduled" and s.scheduled is None:
            s.scheduled = today
    # priority and tags
    if m := mk.search(_PRIO_RE):
        g = m.groupdict()
        if g["none"]:
            s.priority = "none"
        else:
            lvl = (g["lvl"] or g["lvl2"] or g["lvl3"] or g["lvl4"] or g["urg"] or g["urg2"]
                   or "").lower()
            s.priority = _PRIO_MAP.get(lvl.split()[0] if lvl else "", "A")
        mk.take(*m.span())
    elif s.ref_verb in ("make", "mark", "set", "flag", "bump", "change") and (
            m := mk.search(_PRIO_COMPLEMENT)):
        s.priority = _PRIO_MAP.get(m.group("w").lower().split()[0], "A")
        mk.take(*m.span())
    if got := _tagged_as(t):
        start, stop, end, tags = got
        if mk.free(start, stop):
            s.tags += [x for x in re.split(r"\s*(?:,|\band\b)\s*", tags) if x]
            mk.take(start, end)
    for m in list(_TAG_RE.finditer(t)):
        if not mk.free(*m.span()):
            continue
        raw = m.group("hash") or m.group("at") or m.group("tag") or m.group("tag2") or ""
        names = [x.strip() for x in re.split(r"\s*(?:,|\band\b)\s*", raw) if x.strip()]
        names = [n for n in names if re.fullmatch(r"@?[\w-]+", n) and n.lower() not in STOP]
        if names:
            s.tags += [n.replace("-", "_") if not n.startswith("@") else n for n in names]
            mk.take(*m.span())
    # "it's an errand" / "for work" / "at home": a context that is one of the memex's tags
    filed = False
    if known_tags:
        rx = regex_cache.compile(r"(?:[,.;]\s*|\b)(?:(?:it'?s|its|it\s+is|this\s+is|that'?s)\s+)?"
                        r"(?:(?:an?|for|at|@|on|to|into|in|under|as)\s+)(?:the\s+)?(?P<w>[\w-]+)"
                        r"(?:\s*/\s*maybe)?\b\s*[.!]?", re.I)
        for m in rx.finditer(t):
            if not mk.free(*m.span()):
                continue
            w = m.group("w").lower()
            hit = next((k for k in known_tags if stem(k) == stem(w) and len(w) > 2),
                       None) or place_tag(w, known_tags)
            if hit and (m.group(0).lower().lstrip(",.; ").startswith(("it", "this", "that"))
                        or m.end() >= len(t.rstrip(" .!"))):
                if hit not in s.tags:
                    s.tags.append(hit)
                mk.take(*m.span())
                filed = filed or bool(re.match(r"[,.;\s]*(?:under|in|into|to|as)\b", m.group(0),
                                               re.I))
        if filed and (m := re.match(r"\s*(?:please\s+)?(?:put|file|stick|pop|throw)\s+",
                                    mk.rest(), re.I)) and mk.free(*m.span()):
            s.capture_cue = True  # "put bleed the radiators under home": the verb files it
            mk.take(*m.span())
    if m := _PAST_TIME.search(mk.rest()):
        mk.take(*m.span())
    rest = mk.rest()
    if not s.capture_cue and (m := _STRONG_CAPTURE.match(rest.lstrip())):
        s.capture_cue = True  # "in three days remind me to …"
        lead = len(rest) - len(rest.lstrip())
        mk.take(lead, lead + m.end())
        rest = mk.rest()
    if re.search(r"\bi\s+(?:still\s+|really\s+|also\s+)?(?:have|need|must|should|gotta)\b",
                 rest, re.I):
        s.weak_cue = True
    if m := _WEAK.match(rest.strip()):
        s.weak_cue = True
        lead = len(rest) - len(rest.lstrip())
        mk.take(lead, lead + m.end())
        rest = mk.rest()
    verb = re.match(r"\s*(?:(?:i|we)(?:'ve|\s+have)?\s+)?(?:just\s+|finally\s+|already\s+)?"
                    r"([a-z]+)(?!['\u2019])(?!\s+to\b)", rest, re.I)  # "I've replaced …" too,
    # never "I've got to …" (an obligation)
    # (a contraction is no past verb: "I won't get to X until …" is not "won")
    if verb and past_verb(verb.group(1)):
        s.past = True
    s.title = _tidy(rest)
    if s.state == "WAITING" and (m := _WAIT_LEAD.match(s.title)):
        who = m.group("who")
        what = m.group("what")
        title = (f"{who} {m.group('link')} {what}" if m.group("link") == "to" else
                 f"{who}: {what}") if what else f"{who}"
        s.title = title[:1].upper() + title[1:]
    if s.deadline is not None and (m := re.match(r"(?:the\s+)?(?:deadline|due\s+date)\s+"
                                                 r"(?:for|of|on)\s+(?=\S)", s.title, re.I)):
        s.title = s.title[m.end():][:1].upper() + s.title[m.end() + 1:]
    s.ref_text = _ref_words(s.title)
    if s.arrived:  # "the refund from Hetzner came through": the arrival names nothing
        s.ref_text = " ".join(_ARRIVED.sub(" ", s.ref_text).split()) or s.ref_text
    if len(said_state.split()) > 1:  # "… isn't going to happen" names no item
        s.ref_text = " ".join(re.sub(re.escape(said_state), " ", s.ref_text,
                                     flags=re.I).split()) or s.ref_text
    s.obliged = bool(_OBLIGED.search(t))
    if s.obliged:
        s.past = False
    s.refs = reference_phrases(s.title)
    if m := _ALLOT.match(s.title):  # "block out friday for the tax return": the task is that
        obj = _LEAD.sub("", m.group("ref")).strip()
        s.title = obj[:1].upper() + obj[1:]
    return s


_OBLIGED = regex_cache.compile(
    r"\b(?:has|have|needs?|got|ought)\s+to\s+(?:be|get)\s+\w+|\b(?:must|should|shall|will|'ll|"
    r"can|could|would|might|may)\s+(?:not\s+)?(?:be|get)\s+\w+ed\b|\bneeds?\s+\w+ing\b|"
    r"\bwants?\s+\w+ing\b|\bto\s+be\s+\w+ed\b", re.I)
"""What must still happen ("has to be bought", "needs paying", "should be sent"): the
participle reports nothing done."""
_SUBJECT = regex_cache.compile(
    r"^(?P<subj>(?:the|my|our|that|this|those|these|his|her|their)\s+.+?|(?!(?:i|we|you|he|she|"
    r"it|they|there|this|that|let's)\b)[\w'-]+(?:\s+[\w'-]+){0,3}?)\s+(?:can'?t|cannot|"
    r"can|could(?:n'?t)?|won'?t|will|would(?:n'?t)?|needs?|has|have|had|must|should(?:n'?t)?|"
    r"is|isn'?t|are|aren'?t|was|wasn'?t|were|goes|gets|starts?|happens?|slips?|moves?|"
    r"begins?|kicks\s+off|runs?|lands?|takes?|shifts?|belongs?|waits?|stays?)\b", re.I)
"""The subject of a statement about an item ("the invoice cleanup can't happen …", "pi-hole
and caddy need to …"): what the statement is about."""
_ALLOT = regex_cache.compile(
    r"^(?:please\s+)?(?:reserve|block(?:\s+(?:out|off|in))?|set\s+aside|put\s+aside|keep|pencil"
    r"(?:\s+in)?|make\s+(?:some\s+)?time|carve\s+out|earmark|save|hold|use|spend|dedicate|"
    r"devote|slot(?:\s+in)?|allocate|allot|free\s+up|book\s+(?:out|off|in)|plan)\b"
    r"(?:\s+(?:some|the|a|an|my|time|slot|block|window|morning|afternoon|evening|day))*\s+"
    r"(?:for|to|on)\s+(?P<ref>\S.*)$", re.I)
"""Time set aside for an item ("reserve monday 9am for the dental cleaning", "block out
friday for the tax return"): the item is what follows "for"."""


def reference_phrases(title: str) -> list[str]:
    """The phrases of a clause (its title once the slots are gone) that may name an existing
    entry beside the whole title: the object time is set aside for, a statement's subject."""
    out: list[str] = []
    if m := _ALLOT.match(title):
        out.append(m.group("ref"))
    if m := _SUBJECT.match(title):
        out.append(m.group("subj"))
    return [_ref_words(x) for x in out if words(x)]


_LEAD = regex_cache.compile(r"^(?:(?:first\s+thing(?:\s+in\s+the\s+morning)?|and|then|so|also|but|oh|ok|okay|please|that|it'?s|its|it\s+is|"
                   r"is|are|to|about|on|at|by|for|in|the\s+whole\s+thing\s+is|the\s+first\s+one"
                   r"\s+is|first\s+one\s+is|starting|start(?:ing)?\s+from)\b[\s,:;-]*)+", re.I)
_TRAIL = regex_cache.compile(r"[\s,:;-](?:(?:has|have|needs?|must|ought)\s+to\s+be(?:\s+(?:in|done|"
                    r"ready|finished|sent|submitted|handed\s+in))?|must\s+be(?:\s+(?:in|done|ready))?|"
                    r"first\s+thing(?:\s+in\s+the\s+morning)?|and|then|so|also|but|please|it'?s|its|it\s+is|is|are|has|have|"
                    r"to|on|at|by|for|in|from|the|a|an|of|with|the\s+whole\s+thing\s+is|"
                    r"first\s+one\s+is|the\s+first\s+one\s+is|starting)$", re.I)
"""One filler phrase ending the text (``, it has to be``), with the separator before it."""
_TRAIL_PUNCT = frozenset(" \t\n,:;.!-\u2013\u2014")
_TRAIL_SPAN = 64  # longer than any phrase above: the search looks no further back


# "tag it as work, home and errands" at the end of the text.  Once one regexp,
#   \btag(?:ged)?\b.*?\s(?P<span>(?:as|with)\s+(?P<tags>W(?:\s*(?:,|and)\s*W)*))\s*[.!]?$
# (W = [\w@-]+): its lazy .*? scanned to the end from every "tag" (quadratic on
# ":tag::tag:…"), and a W that may hold "and" made the list ambiguous (exponential on
# "as aandaandaand…?").  _tagged_as gives the same match in linear time.
_TAG_WORD = regex_cache.compile(r"\btag(?:ged)?\b", re.I)
_TAG_AS_AT = regex_cache.compile(r"(?=\s(?:as|with)\s)", re.I)
_TAG_AS_HEAD = regex_cache.compile(r"\s(?:as|with)\s+", re.I)
_W, _SP, _COMMA, _A, _N, _D = range(6)  # character classes of the list


_AND_CLASS = {"a": _A, "A": _A, "n": _N, "N": _N, "d": _D, "D": _D}


def _tag_class(ch: str) -> int:
    if ch in _AND_CLASS:
        return _AND_CLASS[ch]
    if ch.isalnum() or ch in "_@-":
        return _W
    if ch.isspace():
        return _SP
    return _COMMA if ch == "," else -1


# The list's automaton: states 0 start, 1 in a word (accepting), 2 blanks after a word,
# 3 after "," or "and" (blanks, then a word), 4 after "a", 5 after "an".
_TAG_NFA = (
    (0, (_W, _A, _N, _D), 1), (3, (_W, _A, _N, _D), 1), (3, (_SP,), 3),
    (1, (_W, _A, _N, _D), 1), (1, (_SP,), 2), (1, (_COMMA,), 3), (1, (_A,), 4),
    (2, (_SP,), 2), (2, (_COMMA,), 3), (2, (_A,), 4), (4, (_N,), 5), (5, (_D,), 3),
)


def _list_starts(t: str, stop: int) -> set[int]:
    """Every p at which t[p:stop] is a whole tag list W((,|and)W)*: the automaton run
    backwards from ``stop`` once (linear), instead of a backtracking match per start."""
    starts: set[int] = set()
    cur = {1}
    p = stop
    while cur and p > 0:
        p -= 1
        c = _tag_class(t[p])
        cur = {a for a, cls, b in _TAG_NFA if b in cur and c in cls}
        if 0 in cur:
            starts.add(p)
    return starts


def _tagged_as(t: str) -> tuple[int, int, int, str] | None:
    """(span start, span end, match end, tag list) of "tag … as|with LIST" ending the
    text, as the regexp above would match it."""
    end = len(t)
    stop = end - 1 if t.endswith("\n") else end
    if stop and t[stop - 1] in ".!":
        stop -= 1
        if stop < end - 1:  # "x.\n": $ before the final newline
            end -= 1
    while stop and t[stop - 1].isspace():
        stop -= 1
    starts = _list_starts(t, stop)
    if not starts:
        return None
    valid: list[tuple[int, int]] = []  # (the blank before as|with, where the list starts)
    for m in _TAG_AS_AT.finditer(t, 0, stop):
        head = _TAG_AS_HEAD.match(t, m.start())
        if head is not None and head.end() in starts:
            valid.append((m.start(), head.end()))
    i = 0
    for w in _TAG_WORD.finditer(t):
        e = w.end()
        while i < len(valid) and valid[i][0] < e:
            i += 1
        if i == len(valid):
            return None
        k, list_start = valid[i]
        if next_of(t, e, "\n") >= k:  # .*? does not cross a line
            return k + 1, stop, end, t[list_start:stop]
    return None


def _drop_trailing_fillers(t: str) -> str:
    """``t`` without the filler phrases (and separators) it ends with.  Peeled from the
    end with a bounded search each time: linear, where one anchored regex over the whole
    text backtracks quadratically on a long run of separators."""
    end = len(t)
    while True:
        cut = end
        while cut and t[cut - 1] in _TRAIL_PUNCT:
            cut -= 1
        m = _TRAIL.search(t, max(0, cut - _TRAIL_SPAN), cut)
        if m is None:
            return t[:end]
        end = m.start()


def _tidy(rest: str) -> str:
    t = " ".join(rest.split())
    t = re.sub(r"\s+([,.;:!?])", r"\1", t)
    t = re.sub(r"([,;:])(?:\s*[,;:])+", r"\1", t)
    # drop clauses that were emptied by the slot spans ("…, first one is" / "…, it's")
    parts = [p.strip() for p in re.split(r"(?<=[,;])\s*|(?<=\.)\s+", t)]
    kept = [p for p in parts if _LEAD.sub("", p.strip(" ,;.")).strip(" ,;.")]
    t = " ".join(kept)
    if m := re.fullmatch(r"[\"'“‘](.+)[\"'”’]", t.strip(" ,;:-.!")):
        t = m.group(1)
    for _ in range(3):
        t = _LEAD.sub("", t).strip()
        t = _drop_trailing_fillers(" " + t).strip()
        t = t.strip(" ,;:-.!\u2013\u2014")
    return t[:1].upper() + t[1:] if t else t


def _ref_words(title: str) -> str:
    """The title minus the verbs that act on an item (mark, move, tag it…)."""
    t = re.sub(r"^(?:please\s+|can\s+you\s+|could\s+you\s+)?(?:mark|move|reschedule|postpone|"
               r"push|delay|bump|bring|pull|shift|defer|snooze|set|change|tag|untag|stick|put|"
               r"prioriti[sz]e|"
               r"deprioriti[sz]e|make|give|schedule|cancel|scrap|ditch|drop|close|reopen|"
               r"append|flag|finished|completed|done\s+with)\b", "", title, flags=re.I)
    t = re.sub(r"[,;]\s*(?:drop|scrap|ditch|cancel|kill|bin)\s+(?:it|that|this)\b|"
               r"\b(?:after\s+all)\b|"
               r"\b(?:an?|the|my)\s+next\s+(?:action|step)s?\b|\b(?:can|could|will|may)\s+"
               r"wait\b|\b(?:put|move|file|stick)\s+(?:it|them|this|that)\b", " ", t, flags=re.I)
    t = re.sub(r"\bon\s+hold\b", " ", t, flags=re.I)
    t = re.sub(r"\b(?:as\s+)?(?:done|finished|complete|completed|cancell?ed|waiting(?:\s+on|"
               r"\s+for)?|next)\b", " ", t, flags=re.I)
    t = re.sub(r"\b(?:the\s+)?deadline\s+(?:for|of|on)\b|\bthe\s+due\s+date\s+(?:for|of)\b|"
               r"\b(?:deadline|due\s+date)\b|\b(?:moved|pushed|postponed|rescheduled|bumped|"
               r"shifted|delayed)\b|\btake\b|\boff\s+(?:my|the)\s+(?:list|agenda|plate)\b",
               " ", t, flags=re.I)
    return " ".join(t.split())
