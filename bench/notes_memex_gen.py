"""A second memex for ``bench/notes_qa.py``: everyday notes of other kinds than the example
memex (recipes, meetings, tool settings, reading notes, projects), each fact stated once
in the words a note-taker uses, plus seeded filler notes of the same kinds so that retrieval
has near misses.  The questions over it (``bench/data/notes-qa-own.jsonl``, ``"memex":
"generated"``) are asked the way people ask, not in these sentences.

Run: python bench/notes_memex_gen.py DEST [--seed N] [--filler N]
Deterministic for a seed; writes only under DEST (a new directory).  Commit this script,
never its output.
"""

from __future__ import annotations

import argparse
import random
import uuid
from pathlib import Path

NOTES: dict[str, str] = {
    "recipes/pancakes.org": """#+TITLE: Sunday pancakes
#+FILETAGS: :recipe:breakfast:

* Sunday pancakes
Fluffy American-style stack, makes about ten.
** Ingredients
- 200 g plain flour
- 2 tsp baking powder, pinch of salt, 1 tbsp sugar
- 300 ml milk, 1 egg, 30 g melted butter
** Method
1. Whisk dry things, then wet things, then combine; lumps are fine.
2. Rest the batter 10 minutes while the pan heats.
3. Medium heat, a ladle each, flip when bubbles pop.
""",
    "recipes/red-lentil-dal.org": """#+TITLE: Red lentil dal
#+FILETAGS: :recipe:dinner:

* Red lentil dal
Cheap, fast, freezes well.
** Ingredients
| Item           | Amount  |
|----------------+---------|
| red lentils    | 250 g   |
| coconut milk   | 1 can   |
| chopped tomato | 1 can   |
| garam masala   | 2 tsp   |
** Method
- Rinse the lentils until the water runs clear.
- Fry onion, garlic and ginger, add spices for a minute.
- Add lentils, tomato and 750 ml water; let it bubble gently for 25 min, stirring now and then.
- Stir in the coconut milk at the end.
** Serving
Goes on basmati rice with a squeeze of lime and some coriander.
""",
    "recipes/focaccia.org": """#+TITLE: Focaccia
#+FILETAGS: :recipe:baking:

* Focaccia
High-hydration, no-knead, overnight in the fridge.
** Bake
Preheat to 230 °C with the tray inside. Dimple, drizzle oil, flaky salt, rosemary.
Bake 22 minutes until deep golden.
""",
    "meetings/garden-committee.org": """#+TITLE: Community garden committee
#+FILETAGS: :meeting:garden:

* Community garden committee
We gather on the first Thursday of every month at 19:00 in the shed.
Ingrid Larsen keeps the minutes; Tomás chairs.
** [2027-02-04 Thu] February session
- Approved €480 for replacement spades, hoes and two wheelbarrows.
- Water butts to be checked before April.
- Plot 12 is free again; waiting list has three names.
""",
    "tools/kitty.org": """#+TITLE: kitty terminal
#+FILETAGS: :tools:config:

* kitty terminal config
** Settings I changed
- font_family Iosevka Term, size 13
- scrollback_lines 20000 (the default 2000 is too short for build logs)
- confirm_os_window_close 0
** Keys
- ctrl+shift+enter opens a split in the current directory
""",
    "tools/ssh.org": """#+TITLE: ssh setup
#+FILETAGS: :tools:config:

* ssh client setup
** ~/.ssh/config
- ServerAliveInterval 60 so idle sessions through the router stay up
- ControlMaster auto with ControlPersist 10m
** Hosts
- nas: HostName 192.168.1.20, Port 2222, User backup
- pi: HostName pi.lan, User pi
""",
    "tools/studio-network.org": """#+TITLE: Studio network
#+FILETAGS: :tools:network:

* Studio network notes
Guest network is separate from the equipment VLAN.
The guest password gets rotated monthly and is written on the whiteboard.
""",
    "reading/atomic-habits.org": """#+TITLE: Atomic Habits
#+FILETAGS: :reading:book:

* Atomic Habits (James Clear)
Central claim: you do not rise to the level of your goals, you fall to the level of
your systems. Small changes compound.
** Takeaways
- Make the cue obvious, the craving attractive, the response easy, the reward satisfying.
- Habit stacking: after I pour coffee, I write one sentence.
""",
    "reading/deep-work.org": """#+TITLE: Deep Work
#+FILETAGS: :reading:book:

* Deep Work (Cal Newport)
:PROPERTIES:
:PAGES: 296
:END:
296 pages; read it on the train in January.
** Notes
- Schedule every minute of the day, including shallow work blocks.
- Quit social media as an experiment for 30 days.
""",
    "reading/the-lamplighter.org": """#+TITLE: The Lamplighters
#+FILETAGS: :reading:novel:

* The Lamplighters — novel
By Emma Stonex. Three keepers vanish from a lighthouse off Cornwall in 1972.
Borrowed from Jessie Burton's shelf? No — that was The Miniaturist; this one was a gift.
""",
    "projects/bathroom.org": """#+TITLE: Bathroom renovation
#+FILETAGS: :project:home:

* Bathroom renovation
Total we agreed to spend: €9,500 including tiles and fittings.
** People
- Plumbing: Nowak & Sons (Marek), quote accepted 2 Feb.
- Tiler: Ana, booked.
** Plan
- Strip-out in the first week of March.
- Tiling begins 12 March, should take four days.
- Fittings last; water off for one day.
""",
    "projects/ebike.org": """#+TITLE: Commuter e-bike
#+FILETAGS: :project:bike:

* Commuter e-bike
Shortlist after two test rides: Tern Quick Haul. Runner-up was a Riese & Müller.
** Specs of the Tern
- Bosch Active Line Plus, 400 Wh battery
- about 90 km range in eco mode on the flat
- rated for 150 kg total load
""",
}

_FILLER_KINDS = {
    "recipes": ("recipe", ["soup", "salad", "stew", "curry", "risotto", "tart", "bread"],
                ["{n} g of {i}", "simmer for {m} minutes", "serves {s}", "oven at {t} °C"]),
    "meetings": ("meeting", ["book club", "parents evening", "band rehearsal", "running club",
                             "tenant association"],
                 ["next time at {h}:00", "{p} will bring the {i}", "budget of €{n} agreed"]),
    "tools": ("config", ["vim", "tmux", "git", "firefox", "zsh", "rsync", "borg"],
              ["timeout set to {m} s", "history size {n}", "theme is {c}", "port {n}"]),
    "reading": ("book", ["a history of salt", "the design of everyday things", "range",
                         "thinking in systems", "four thousand weeks"],
                ["{n} pages", "recommended by {p}", "chapter {s} on feedback loops"]),
    "projects": ("project", ["garage shelves", "balcony planter", "photo archive",
                             "kitchen tap", "attic insulation"],
                 ["budget €{n}", "{p} helps on {c}day", "done by week {s}"]),
}
_PEOPLE = ["Aiko", "Bruno", "Chiara", "Dmitri", "Elif", "Femi", "Greta", "Hugo"]
_THINGS = ["onion", "lentils", "rice", "cables", "snacks", "paint", "screws", "chairs"]
_COLOURS = ["gruvbox", "nord", "solarized", "monday", "tues", "fri"]


def filler(rng: random.Random, i: int) -> tuple[str, str]:
    folder = rng.choice(sorted(_FILLER_KINDS))
    tag, topics, facts = _FILLER_KINDS[folder]
    topic = rng.choice(topics)
    lines = [f"#+TITLE: {topic.title()} {i}", f"#+FILETAGS: :{tag}:", "",
             f"* {topic.title()} ({i})", ":PROPERTIES:", f":ID:       {uuid.UUID(int=rng.getrandbits(128))}",
             ":END:"]
    for f in rng.sample(facts, k=min(3, len(facts))):
        lines.append("- " + f.format(n=rng.randint(2, 900), m=rng.randint(2, 90),
                                     s=rng.randint(2, 9), t=rng.choice([180, 200, 220]),
                                     h=rng.randint(17, 21), i=rng.choice(_THINGS),
                                     p=rng.choice(_PEOPLE), c=rng.choice(_COLOURS)))
    return f"{folder}/{topic.replace(' ', '-')}-{i}.org", "\n".join(lines) + "\n"


def generate(dest: Path, seed: int = 7, n_filler: int = 40) -> int:
    """Write the notes under ``dest``; returns the number of files."""
    rng = random.Random(seed)
    files = dict(NOTES)
    for i in range(n_filler):
        path, text = filler(rng, i)
        files[path] = text
    for rel, text in files.items():
        p = dest / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    return len(files)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dest")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--filler", type=int, default=40)
    a = ap.parse_args()
    dest = Path(a.dest)
    if dest.exists() and any(dest.iterdir()):
        raise SystemExit(f"{dest} is not empty: give a new directory")
    print(f"wrote {generate(dest, a.seed, a.filler)} files under {dest}")


if __name__ == "__main__":
    main()
