"""Reading the person's next utterance: does it identify the presented candidate, end the
recall, admit the wider search offered, or is it more cue?

Only an explicit act of the person closes a recall: saying so ("yes, that one"), or going
on with it as that past ("resume it"). A hedge ("maybe that one"), a hypothetical, a
negation or silence never identifies."""

from __future__ import annotations

import re
from typing import Literal

__all__ = ["Reading", "read_answer"]

Reading = Literal["identified", "stopped", "admitted", "declined", "cue", "silent"]

_NEGATION = re.compile(r"^\s*(?:no|nope|nah|wrong|not)\b|\bnot (?:it|that|this|the one|quite)\b|"
                       r"\bthat'?s not\b|\bisn'?t (?:it|the one)\b|\bwasn'?t (?:it|that)\b|"
                       r"\b(?:different|another|other) (?:one|session|time)\b", re.I)
_CORRECTION = re.compile(r"\b(?:but|actually|though|except|instead|rather|earlier|later|"
                         r"older|newer|wrong)\b", re.I)
_HEDGE = re.compile(r"\b(?:maybe|perhaps|might be|could be|not sure|i guess|possibly|if that'?s|"
                    r"suppose|hypothetically|what if)\b|\?\s*$", re.I)
_IDENTIFY = re.compile(
    r"^\s*(?:yes|yeah|yep|yup|exactly|correct|bingo|indeed|right|that'?s right|oui|ja|sí)\b|"
    r"\bthat'?s (?:it|the one|right|what i meant|the session|the one i meant)\b|"
    r"\b(?:this|that) (?:is|was) (?:it|the one)\b|\bfound it\b|\bthat one\b|"
    r"\b(?:open|resume|reopen|continue|pick up) (?:it|that|this|that session|this session)\b|"
    r"\bc'est (?:ça|celle-là|celui-là)\b|\bgenau\b|\bdas war'?s\b|\beso es\b", re.I)
_STOP = re.compile(
    r"^\s*(?:never ?mind|forget it|forget about it|stop|cancel|quit|drop it|leave it|skip it|"
    r"doesn'?t matter|no matter|enough|that'?s all)\b|\b(?:never ?mind|forget (?:it|about it)|"
    r"let'?s (?:stop|drop it|move on)|stop (?:looking|searching|here))\b|"
    r"\blaisse tomber\b|\bvergiss es\b|\bolvídalo\b|\bdéjalo\b", re.I)
_ADMIT = re.compile(
    r"^\s*(?:yes|yeah|yep|sure|ok|okay|go ahead|do it|please|go for it|alright|fine)\b|"
    r"\b(?:search|look|go|dig) (?:wider|further|older|deeper|everywhere|more|back)\b|"
    r"\b(?:widen|expand) (?:it|the search)\b|\bgo ahead\b", re.I)
_DECLINE = re.compile(r"^\s*(?:no|nope|nah|no thanks|not now|don'?t|stop here|leave it)\b"
                      r"[\s,.!]*$", re.I)


def read_answer(text: str | None, *, presented: bool, offered: bool) -> Reading:
    """What the utterance does, given whether a candidate was presented and whether a
    wider search was offered in the last round."""
    if text is None or not text.strip():
        return "silent"
    t = text.strip()
    if _STOP.search(t):
        return "stopped"
    if offered:
        if _DECLINE.match(t):
            return "declined"
        if _ADMIT.search(t) and not _NEGATION.search(t):
            return "admitted"
    if (presented and _IDENTIFY.search(t) and not _NEGATION.search(t)
            and not _HEDGE.search(t) and not _CORRECTION.search(t)):
        return "identified"
    return "cue"
