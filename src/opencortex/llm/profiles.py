"""Prompt and time budgets per kind of model: what a call may cost before it is worth less
than the offline answer.

Why profiles rather than one size: a 1.5B model on two CPU cores reads 20-100 prompt tokens
a second, so a 3k-token prompt is 30-130 s before the first output token; a hosted model
reads the same prompt in well under a second.  ``small`` keeps every prompt to what such a
model reads in a few seconds (the person's request, the skill's fixed instructions, the top
passages) and gives up on the model after ``budget`` seconds; ``large`` keeps the full
situation (agenda, neighbours, log lines) and lets the model decide routing.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["PROFILES", "Profile", "profile"]


@dataclass(frozen=True, slots=True)
class Profile:
    name: str
    situation_tokens: int
    """Budget of the assembled situation (time, focus, agenda, neighbours) in a prompt;
    0 = only the current time."""
    max_output: int
    """``max_tokens`` for one proposal: a reply, a route, a GTD change."""
    budget: float
    """Seconds one request may wait for the model before the offline answer is given (the
    late model answer is dropped); ``[llm] budget`` overrides it."""
    route_with_model: bool
    """Whether the router asks the model to split a request (``small``: the deterministic
    decomposer, which is at least as accurate on the dev sets and costs no model call)."""


PROFILES: dict[str, Profile] = {
    "small": Profile("small", situation_tokens=0, max_output=160, budget=30.0,
                     route_with_model=False),
    "large": Profile("large", situation_tokens=1500, max_output=1024, budget=90.0,
                     route_with_model=True),
}


def profile(name: str | None) -> Profile:
    """The profile called ``name`` (None or unknown: ``large``, the old behaviour)."""
    return PROFILES.get(name or "large", PROFILES["large"])
