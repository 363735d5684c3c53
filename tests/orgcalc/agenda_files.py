"""Generated Org files holding every form the agenda reads, around a given day: active
timestamps and appointments, time ranges, date ranges, SCHEDULED (delays, repeaters
``+ ++ .+``), DEADLINE (warning periods), DONE entries, archived and COMMENT subtrees,
stamps in blocks, comments, drawers and tables, diary sexps."""

from __future__ import annotations

import datetime as dt
import random

_DOW = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]


def stamp(d: dt.date, time: str | None = None, extra: str = "", active: bool = True) -> str:
    o, c = ("<", ">") if active else ("[", "]")
    parts = [d.isoformat(), _DOW[d.weekday()], *([time] if time else []),
             *([extra] if extra else [])]
    return o + " ".join(parts) + c


def forms_file(today: dt.date) -> str:
    """One file with each form once (hand-written cases, dates relative to ``today``)."""
    def d(n: int) -> dt.date:
        return today + dt.timedelta(days=n)

    s = stamp
    return f"""#+TITLE: Every agenda form
#+TODO: TODO NEXT WAITING | DONE CANCELLED
Before any heading {s(d(0))} is not an entry.

* Book club {s(d(2), "19:00")}
* Dentist
  {s(d(1), "09:30")}
* Standup
  {s(d(3), "10:00-10:15")} in the small room
* Conference
  {s(d(4))}--{s(d(6))}
* Workshop hours
  {s(d(1), "14:00")}--{s(d(1), "17:00")}
* Long trip
  {s(d(-3))}--{s(d(20))}
* Trip with times
  {s(d(5), "08:00")}--{s(d(8), "20:00")}
* Weekly review {s(d(-10), extra="+1w")}
* Monthly bill
  {s(d(-40), extra="+1m")}
* Yearly thing
  {s(d(-365 + 3), extra="+1y")}
* Repeat with warning
  {s(d(-7), extra="+1w -2d")}
* TODO Write report
  SCHEDULED: {s(d(0))}
* TODO Call plumber
  SCHEDULED: {s(d(2), "11:00")}
* TODO Old task
  SCHEDULED: {s(d(-5))}
* TODO Delayed task
  SCHEDULED: {s(d(-5), extra="-3d")}
* TODO Delayed not yet
  SCHEDULED: {s(d(-1), extra="-3d")}
* TODO Delayed future
  SCHEDULED: {s(d(2), extra="-2d")}
* TODO Water plants
  SCHEDULED: {s(d(-2), extra="+3d")}
* TODO Gym
  SCHEDULED: {s(d(-4), "07:00", "++2d")}
* TODO Stretch
  SCHEDULED: {s(d(-1), extra=".+2d")}
* NEXT Pay rent
  DEADLINE: {s(d(0))}
* TODO Tax return
  DEADLINE: {s(d(4))}
* TODO Far deadline
  DEADLINE: {s(d(20))}
* TODO Far deadline, long warning
  DEADLINE: {s(d(20), extra="-30d")}
* TODO Near deadline, short warning
  DEADLINE: {s(d(5), extra="-3d")}
* TODO Near deadline, warning 1w
  DEADLINE: {s(d(5), extra="-1w")}
* TODO Overdue
  DEADLINE: {s(d(-6), "17:00")}
* TODO Deadline at time {s(d(3))}
  DEADLINE: {s(d(3), "16:00")}
* TODO Renew licence
  DEADLINE: {s(d(-3), extra="+1w")}
* WAITING Both planned
  DEADLINE: {s(d(6))} SCHEDULED: {s(d(1))}
* DONE Finished scheduled past
  CLOSED: {s(d(-1), "10:00", active=False)} SCHEDULED: {s(d(-2))}
* DONE Finished scheduled in window
  SCHEDULED: {s(d(3))}
* DONE Finished deadline past
  DEADLINE: {s(d(-2))}
* DONE Finished deadline in window
  DEADLINE: {s(d(4))}
* CANCELLED Cancelled with stamp
  {s(d(1))}
* Appointment at 10am
  {s(d(2))}
* TODO Meeting 14:30 in the title
  SCHEDULED: {s(d(1))}
* Properties
  :PROPERTIES:
  :WHEN:     {s(d(3), "12:00")}
  :END:
* Table
  | a | {s(d(2))} |
* List
  - item {s(d(5))}
  - range {s(d(1))}--{s(d(2))}
* Blocks
#+begin_example
{s(d(1))} inside an example block
#+end_example
#+begin_src sh
echo {s(d(2))} {s(d(2))}--{s(d(3))}
#+end_src
: fixed width {s(d(3))}
# a comment {s(d(4))}
* Archived :ARCHIVE:
  {s(d(1))}
** TODO Under archive
   DEADLINE: {s(d(1))}
* COMMENT Commented
  {s(d(1))}
** TODO Under comment
   SCHEDULED: {s(d(1))}
* Inactive only
  {s(d(1), active=False)}
* Clocked
  :LOGBOOK:
  CLOCK: {s(d(-1), "09:00", active=False)}--{s(d(-1), "10:00", active=False)} =>  1:00
  :END:
* Diary
  <%%(diary-float t 3 1)>
* Two stamps
  {s(d(2), "08:00")} and {s(d(2), "18:00")}
* Drawer stamp
  :NOTES:
  Call back {s(d(1), "15:00")}
  :END:
* Quoted
#+begin_quote
Said on {s(d(2))}
#+end_quote
#+begin_verse
Sung on {s(d(3))}
#+end_verse
* Link description [[https://example.org][{s(d(1))}]]
  #+DATE: {s(d(2))}
* Evening call 8:30pm
  {s(d(4))}
* TODO [#A] Weekly sync :work:
  SCHEDULED: {s(d(-14), "09:15", "+1w")} DEADLINE: {s(d(-12), "17:00", "+1w -1d")}
* Hourly slot
  {s(d(1), "10:00-11:00", "+1w")}
* Footnote[fn:1]

[fn:1] A note dated {s(d(5))}
"""


def random_file(seed: int, today: dt.date, n: int = 80) -> str:
    """``n`` headings mixing the forms at random dates around ``today``."""
    rnd = random.Random(seed)
    kws = ["", "", "TODO ", "NEXT ", "DONE ", "CANCELLED "]
    reps = ["", "", "", "+1d", "+2d", "+1w", "++1w", ".+3d", "+1m", "+2w"]
    warns = ["", "", "-2d", "-1w", "-10d"]
    times = [None, None, "09:00", "13:30", "18:45", "08:00-09:00"]
    lines = ["#+TODO: TODO NEXT | DONE CANCELLED", ""]
    for i in range(n):
        def date() -> dt.date:
            return today + dt.timedelta(days=rnd.randint(-30, 30))

        tag = rnd.choice(["", "", "", " :work:", " :ARCHIVE:"])
        comment = "COMMENT " if rnd.random() < 0.05 else ""
        lines.append(f"{'*' * rnd.randint(1, 3)} {rnd.choice(kws)}{comment}Entry {i}{tag}")
        plan = []
        if rnd.random() < 0.4:
            extra = " ".join(x for x in (rnd.choice(reps), rnd.choice(warns)) if x)
            plan.append("SCHEDULED: " + stamp(date(), rnd.choice(times[:-1]), extra))
        if rnd.random() < 0.4:
            extra = " ".join(x for x in (rnd.choice(reps), rnd.choice(warns)) if x)
            plan.append("DEADLINE: " + stamp(date(), rnd.choice(times[:-1]), extra))
        if plan:
            lines.append("  " + " ".join(plan))
        for _ in range(rnd.randint(0, 2)):
            form = rnd.random()
            if form < 0.5:
                lines.append("  " + stamp(date(), rnd.choice(times), rnd.choice(reps)))
            elif form < 0.75:
                a = date()
                b = a + dt.timedelta(days=rnd.randint(0, 6))
                lines.append(f"  {stamp(a, rnd.choice(times[:-1]))}--{stamp(b)}")
            elif form < 0.9:
                lines += ["#+begin_example", "  " + stamp(date()), "#+end_example"]
            else:
                lines.append("  - note " + stamp(date(), rnd.choice(times)))
    return "\n".join(lines) + "\n"
