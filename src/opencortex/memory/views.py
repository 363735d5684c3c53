"""The views the rest of the system asks for: active projects, recently done tasks,
next actions per project, overdue items, today's agenda — each a list of query predicates,
which every store compiles in its own SQL dialect."""

from __future__ import annotations

import datetime as dt

from .agenda import Agenda, compute_agenda, rows_from_records
from .nodes import Node
from .query import Predicate
from .store import IndexStore

__all__ = ["active_projects", "agenda", "day_agenda", "next_actions", "overdue",
           "recently_done"]


def active_projects(store: IndexStore) -> list[Node]:
    """Entries tagged ``project`` (locally) or with category Project, not done/archived.
    A project's sub-entries inherit the tag, so only the outermost counts."""
    return store.find([Predicate("project"), Predicate("open"),
                       Predicate("archived", negate=True)])


def recently_done(store: IndexStore, limit: int = 10, days: int | None = None,
                  today: dt.date | None = None) -> list[Node]:
    """The last ``limit`` completed tasks by CLOSED time (optionally within ``days``)."""
    preds = [Predicate("done")]
    if days is not None:
        preds.append(Predicate("closed", (f"-{days}",)))
    else:
        preds.append(Predicate("closed"))
    return store.find(preds, limit=limit, order="closed", today=today)


def next_actions(store: IndexStore, project: Node | None = None) -> list[Node]:
    """Open tasks (NEXT first, then other not-done keywords), optionally under one project."""
    nodes = store.find([Predicate("todo")], order="file")
    if project is not None:
        prefix = [*project.outline, project.title]
        nodes = [n for n in nodes if n.file == project.file and n.outline[:len(prefix)] == prefix]
    return sorted(nodes, key=lambda n: (n.todo != "NEXT", n.priority or "B", n.file, n.line))


def overdue(store: IndexStore, today: dt.date | None = None) -> list[Node]:
    """Open tasks whose deadline or scheduled date is before today."""
    today = today or dt.date.today()
    a = store.find([Predicate("todo"), Predicate("deadline", ("past",))], today=today,
                   order="deadline")
    b = store.find([Predicate("todo"), Predicate("scheduled", ("past",))], today=today,
                   order="scheduled")
    return list({n.key: n for n in [*a, *b]}.values())


def day_agenda(store: IndexStore, today: dt.date | None = None, days: int = 7,
               start: dt.date | None = None) -> Agenda:
    """Org's day agenda (``org-agenda-list``) for ``days`` days from ``start`` (default
    today): the one computation behind ``opencortex agenda`` and GTD questions."""
    today = today or dt.date.today()
    first = (start or today).toordinal()
    rows = store.agenda_rows(first, first + days - 1, today.toordinal())
    return compute_agenda(rows_from_records(rows), today, days, start, store.agenda_sexps())


def agenda(store: IndexStore, today: dt.date | None = None, days: int = 7) -> dict[str, list[Node]]:
    """The GTD dashboard: scheduled/deadlines in the next ``days``, overdue, next actions."""
    today = today or dt.date.today()
    return {
        "scheduled": store.find([Predicate("todo"), Predicate("scheduled", (f"+{days}",))],
                                today=today, order="scheduled"),
        "deadlines": store.find([Predicate("todo"), Predicate("deadline", (f"+{days}",))],
                                today=today, order="deadline"),
        "overdue": overdue(store, today),
        "next": [n for n in next_actions(store) if n.todo == "NEXT"],
    }
