"""Rule layer of the router: clause splitting, syntax-only targets, argument extraction.

Rules decide a target only from unambiguous *syntax* (a ``/command``, a URL, a backticked or
prompted command line, an explicit "run …"); what a request means in words is the learned
classifier's (``classifier.py``).  Everything here is pure string work: deterministic and cheap.
"""

from __future__ import annotations

import re

from .. import regex_cache

# --------------------------------------------------------------------------------------------
# splitting
# --------------------------------------------------------------------------------------------

# Connectives that always separate two requests (when both sides are non-empty).
_STRONG = [
    r",?\s*\band then\b", r",?\s*\band after that\b", r",?\s*\bafter that\b",
    r",?\s*\band also\b", r",?\s*\bafterwards\b", r",?\s*\bonce that'?s? done\b",
    r"(?:,|\s)\s*then\b(?=\s+\S+\s+\S)",  # "..., then X Y" (bare "then" needs a 2-word clause)
    r";\s*", r"(?:^|[,.;]\s*)also\b(?=\s+\S)",
    # French
    r",?\s*\bet ensuite\b", r",?\s*\bet puis\b", r",?\s*\bpuis\b", r",?\s*\bensuite\b",
    r",?\s*\baprès ça\b", r",?\s*\bet aussi\b",
    # German
    r",?\s*\bund dann\b", r",?\s*\bdann\b", r",?\s*\bdanach\b", r",?\s*\bund danach\b",
    r",?\s*\bund außerdem\b", r",?\s*\banschließend\b",
    # Spanish
    r",?\s*\by después\b", r",?\s*\by luego\b", r",?\s*\bluego\b", r",?\s*\bdespués\b",
    r",?\s*\by también\b", r",?\s*\by entonces\b",
]
_STRONG_RE = regex_cache.compile("|".join(f"(?:{p})" for p in _STRONG), re.IGNORECASE)

# Sentence boundary: ". " / "? " / "! " followed by a new sentence.
_SENTENCE_RE = regex_cache.compile(r"(?<=[.?!])\s+(?=[A-Za-z¿¡/$`\"'ÀÉÜÖÄ])")

# "and" (or et/und/y) only separates when the right side is itself a request.
_WEAK_RE = regex_cache.compile(r",?\s+\b(?:and|et|und|y|plus)\s+(?=\S)|(?P<comma>,\s+)(?=\S)",
                      re.IGNORECASE)

# Imperative / request-opening verbs (EN, FR, DE, ES).  A right-hand side starting with one of
# these, or with a question word, is a complete request of its own.
_VERBS = set("""
add archive ask book bookmark browse build capture check clean close commit compile copy create
delete deploy download draft edit email execute fetch file find fix get give google grep help
init initialise initialize install kill launch list look make mark move note open pin ping plan
pull push put read record remind remove rename restart review run save scaffold schedule search
send set show spin start summarise summarize teach tell update write draft bootstrap scan
explain describe translate compare define calculate convert print count display tail ping kill
install upgrade google
cherche trouve lance exécute ajoute crée montre rappelle planifie ouvre mets affiche fais
recherche note télécharge
such suche finde zeig zeige führe starte erstelle lege füge erinnere plane öffne setz setze
mach mache lade schau
busca encuentra ejecuta añade agrega crea muestra recuérdame programa abre pon haz descarga
anota
""".split())
# Verbs that are also common nouns ("pros and list"): need at least two words after them.
_NOUNISH = {"list", "schedule", "review", "plan", "note", "file", "check", "search", "record",
            "update", "run", "start", "set", "show", "book", "help", "pin", "fix", "email",
            "capture", "draft", "copy", "move", "save", "read", "write", "look", "mark",
            "count", "print", "display", "tail", "kill", "google"}
_QWORDS = {"what", "what's", "whats", "which", "how", "when", "where", "who", "why", "is", "are",
           "do", "does", "did", "can", "could", "would", "will", "qu'est-ce", "quel", "quelle",
           "comment", "was", "wie", "wann", "wo", "welche", "welcher", "qué", "que", "cuál",
           "cómo", "cuándo", "dónde", "¿qué", "¿cuál", "¿cómo", "¿cuándo"}
_SOFT_OPENERS = regex_cache.compile(
    r"^(?:please\s+|also\s+|then\s+|can you\s+|could you\s+|would you\s+|i need you to\s+|"
    r"i'd like you to\s+|i want you to\s+|go ahead and\s+|s'il te plaît\s+|bitte\s+|"
    r"por favor\s+)+", re.IGNORECASE)
# A right side that only operates on the left side's result ("... and summarize it").
_ANAPHORIC = regex_cache.compile(
    r"^(?:summari[sz]e|explain|translate|read|show|tell me about|describe|save|open|print|"
    r"display|send|email|share|paste|copy|résume|fasse|zusammenfassen|resume|resúmelo)\s+"
    r"(?:it|them|this|that|those|these|the (?:result|results|output|page|answer)s?|le|la|les|"
    r"es|sie|lo|los)\b(?:\s+\S+){0,3}\s*[.?!]?$", re.IGNORECASE)


def _first_word(s: str) -> str:
    m = re.match(r"[\w'’¿¡-]+", _SOFT_OPENERS.sub("", s.strip()).lower())
    return m.group(0).replace("’", "'") if m else ""


def _is_request(s: str) -> bool:
    """Does this fragment read as a complete request of its own (verb- or question-led)?"""
    body = _SOFT_OPENERS.sub("", s.strip())
    w = _first_word(body)
    rest = body.split()[1:]
    if w in _QWORDS:
        return len(rest) >= 1
    if w in _VERBS or w.endswith("-moi"):
        return len(rest) >= (2 if w in _NOUNISH else 1) or w in {"ping", "commit", "push", "pull"}
    return bool(re.match(r"(?:/\w|\$ |`)", body))


_PLACE_CLAUSE = regex_cache.compile(
    r"^(?:(?:please|first|just)\s+)*(?:(?:ssh|mosh)(?:\s+(?:into|onto|to|in\s+to))?|"
    r"(?:log|sign|shell|get)\s*(?:in|on)(?:to)?|connect(?:\s+(?:to|into))?|"
    r"(?:cd|change directory|chdir|hop|jump|switch)\s+(?:in)?to)\s+"
    r"(?:the\s+|my\s+|our\s+)?[\w@.:/~-]+(?:\s+(?:box|server|machine|host|vm|pi|nas|"
    r"router|repo|repository|folder|directory|dir|project|container|cluster))?$",
    re.IGNORECASE)
"""A clause that only goes somewhere ("ssh into the backup box", "cd into the repo"): the
next clause is what to do there, one request with it, not a request of its own."""


def is_place_clause(clause: str) -> bool:
    """Does the clause only move to a host or directory where the next clause acts?"""
    return bool(_PLACE_CLAUSE.match(clause.strip(" ,;")))


_OPENERS_AT = regex_cache.compile(_SOFT_OPENERS.pattern.removeprefix("^"), re.IGNORECASE)
_TOKENS = (regex_cache.compile(r"(?:\s*\S+){0,3}"), regex_cache.compile(r"(?:\s*\S+){0,10}"))
_TWO_WORDS = regex_cache.compile(r"\S\s+\S")


def _head(s: str, lo: int, hi: int, long: bool = False) -> str:
    """``s[lo:hi]`` cut after its soft openers and 3 (``long``: 10) more words: all that
    _is_request (or _ANAPHORIC, at most 9 words) reads, so asking at every cut of a long
    clause costs the head, not the rest of the clause."""
    p = lo
    while p < hi and s[p].isspace():
        p += 1
    run = _OPENERS_AT.match(s, p, hi)
    q = run.end() if run else p
    words = _TOKENS[long].match(s, q, hi)  # always matches (maybe empty)
    return s[lo:words.end() if words else hi]


def _split_weak(clause: str) -> list[str]:
    """Split on and/et/und/y only where both sides are requests and the right isn't anaphoric.

    Linear in the clause: the left side's quote counts are running sums, its two-word test
    is found once per start, and each side is read through _head (at most a few words),
    not copied whole at every cut (which was quadratic on "and and and …")."""
    parts: list[str] = []
    start = 0
    ticks = quotes = 0  # in clause[start:seen]
    seen = 0
    two_words = _TWO_WORDS.search(clause)
    n = len(clause)
    for m in _WEAK_RE.finditer(clause):
        ticks += clause.count("`", seen, m.start())
        quotes += clause.count('"', seen, m.start())
        seen = m.start()
        # a backticked/quoted span must not be cut
        if ticks % 2 or quotes % 2:
            continue
        # len(left.split()) < 2
        if two_words is None or two_words.end() > m.start():
            continue
        if not _is_request(_head(clause, m.end(), n)):
            continue
        if m.group("comma") and not _is_request(_head(clause, start, m.start())):
            continue  # "if it rains, remind me": a bare comma needs requests on both sides
        if _ANAPHORIC.match(_SOFT_OPENERS.sub("", _head(clause, m.end(), n, long=True).strip())):
            continue
        left = clause[start:m.start()]
        if is_place_clause(left):
            continue  # "ssh into the nas and pull the logs": one command, done there
        parts.append(left)
        start = seen = m.end()
        ticks = quotes = 0
        two_words = _TWO_WORDS.search(clause, start)
    parts.append(clause[start:])
    return parts


_CANDIDATE_RE = regex_cache.compile(r",?\s+\b(?:and|et|und|y)\s+(?=\S)|,\s+(?=\S)", re.IGNORECASE)


def split_candidates(clause: str) -> list[tuple[str, str]]:
    """Every unmarked "and"/comma cut of a clause with at least three words on each side, outside
    backticks, quotes and URLs, whose right side is not anaphoric ("… and summarize it"):
    the places a meaning-based split may cut."""
    out: list[tuple[str, str]] = []
    for m in _CANDIDATE_RE.finditer(clause):
        left, right = clause[:m.start()].strip(" ,;"), clause[m.end():].strip(" ,;")
        if left.count("`") % 2 or left.count('"') % 2 or re.search(r"https?://\S*$", left):
            continue
        if len(left.split()) < 3 or len(right.split()) < 3:
            continue
        if _ANAPHORIC.match(_SOFT_OPENERS.sub("", right)) or is_place_clause(left):
            continue
        out.append((left, right))
    return out


def is_strong_joint(between: str, after: str = "") -> bool:
    """Does the text between two clauses say "then" / "and also" / ";" — two requests in a
    row — rather than a bare "and" or comma, which may join two verbs of one request?
    ``after``: the clause that follows (some connectives look ahead at it)."""
    if ";" in between:
        return True
    text = f" {between}{after}"
    return any(m.start() <= len(between) for m in _STRONG_RE.finditer(text))


def split_sentences(text: str) -> list[str]:
    """The request's sentences, in order (a sentence may still hold several clauses)."""
    text = re.sub(r"\s+", " ", text.strip())
    return [s for s in _SENTENCE_RE.split(text) if s.strip()]


def split_clauses(text: str) -> list[str]:
    """Cut a request into ordered clause strings (never empty, punctuation-trimmed)."""
    text = re.sub(r"\s+", " ", text.strip())
    out: list[str] = []
    for sentence in _SENTENCE_RE.split(text):
        # protect backticked spans and URLs from the connective regexes
        protected: list[str] = []

        def _hold(m: re.Match[str], _p: list[str] = protected) -> str:
            _p.append(m.group(0))
            return f"\x00{len(_p) - 1}\x00"

        def _restore(m: re.Match[str], _p: list[str] = protected) -> str:
            return _p[int(m.group(1))]

        s = re.sub(r"`[^`]*`|https?://\S+", _hold, sentence)
        pieces = [p for p in _STRONG_RE.split(s) if p is not None]
        for piece in pieces:
            for sub in _split_weak(piece):
                sub = re.sub(r"\x00(\d+)\x00", _restore, sub)
                sub = sub.strip(" ,;")
                if re.search(r"\w", sub):
                    out.append(sub)
    return out or ([text] if text else [])


# --------------------------------------------------------------------------------------------
# rule classification
# --------------------------------------------------------------------------------------------

_URL_RE = regex_cache.compile(r"\b(?:https?://[^\s)>\"']+|www\.[^\s)>\"']+)", re.IGNORECASE)
_DOMAIN_RE = regex_cache.compile(r"\b[\w-]+\.(?:com|org|net|io|dev|de|fr|es|co\.uk|edu|gov)(?:/\S*)?\b",
                        re.IGNORECASE)
_SLASH_RE = regex_cache.compile(r"^/(recollect|recall|notes|shell|gtd|review|web|foundry|skill|"
                       r"skill-creator|chat)\b", re.IGNORECASE)
_TOOL_LABEL = re.compile(r"^(skill[- ]creator|foundry|recollect|shell|gtd)\s*:\s*\S",
                         re.IGNORECASE)
"""A request labelled with a tool's own name ("skill creator: one that …", "shell: …"): the
label names the target as a slash command does.  Only names no everyday label shares
("notes:", "review:", "web:" may head a text)."""
_PROGRAMS = ("git|ls|df|du|ps|grep|rg|cat|tail|head|make|pip|npm|cargo|docker|kubectl|systemctl|"
             "journalctl|uptime|whoami|pwd|mkdir|rm|mv|cp|chmod|curl|wget|ssh|python3?|pytest|uv|"
             "wc|find|sort|uniq|sed|awk|echo|touch|tar|zip|unzip|free|top|htop|which|env|date")
# "run X" / "execute X": the person names the act of running (a program, a script, the tests)
_RUN_RE = regex_cache.compile(r"^(?:please\s+)?(?:run|execute|exec|lance|exécute|ejecuta|führe)\s+\S",
                     re.IGNORECASE)
# a command line: a program name then flags, a path or a git subcommand, or the bare name alone
_COMMAND_LINE_RE = regex_cache.compile(
    rf"^(?:{_PROGRAMS})(?:\s*$|\s+(?:-{{1,2}}\w|[~./]\S*|\*|\w+\.\w{{1,4}}\b)|(?<=git)\s+"
    r"(?:status|log|diff|pull|push|commit|branch|stash|fetch|checkout|show|add|rebase|merge)\b)",
    re.IGNORECASE)
_QUOTED_CMD_RE = regex_cache.compile(rf"^`[^`]+`$|^\$ |`(?:{_PROGRAMS})\b[^`]*`")

KNOWN_PROGRAMS = frozenset("""
git hg svn ls lsblk lscpu lsusb lspci lsof lsmod lsattr df du ps pgrep pkill pstree htop btop
iotop atop glances nmcli nmtui iwconfig ifconfig iw ip ss netstat ping traceroute tracepath mtr
dig nslookup whois curl wget ssh scp sftp rsync mosh systemctl journalctl loginctl timedatectl
hostnamectl resolvectl networkctl udevadm busctl dmesg uname uptime whoami hostname docker
podman kubectl helm minikube kind k3s k9s terraform ansible vagrant zfs zpool btrfs lvs pvs vgs
lvdisplay vgdisplay mdadm smartctl hdparm fdisk parted blkid findmnt umount apt apt-get
apt-cache dpkg yum dnf rpm pacman yay zypper brew snap flatpak pip pip3 pipx npm npx yarn pnpm
cargo rustc rustup gcc clang cmake ninja meson python python3 node deno bun ruby gem perl java
javac mvn gradle pytest tox ruff mypy uv poetry conda jq yq sed awk gawk grep egrep rg ag fd
fzf tmux vim nvim emacs nano tar gzip gunzip zip unzip xz zstd 7z bzip2 openssl gpg ssh-keygen
ssh-add chmod chown chgrp mkdir rmdir rm mv cp ln wc nproc vmstat iostat mpstat sar nvidia-smi
sensors upower powertop crontab ffmpeg ffprobe magick exiftool pandoc sqlite3 psql mysql
redis-cli mongosh certbot nginx apachectl ufw iptables nft tailscale wg wg-quick restic borg
rclone syncthing virsh qemu-img lxc incus pm2 supervisorctl gh glab aws gcloud az doctl flyctl
heroku ollama llm lsb_release neofetch fastfetch inxi dmidecode xrandr pactl pacmd amixer
bluetoothctl rfkill timeshift snapper borgmatic rustfmt gofmt isort pre-commit
""".split())
"""Programs whose name is no everyday English word (general Unix knowledge, not any one
request's): a clause made of one of these and its subcommand words is a command line."""
_WORDY_PROGRAMS = frozenset("""
find make look link install last time test join split sort head tail free top watch touch kill
which who write mail more less messages size strip sync reset clear view script patch expand
factor file from id init login nice opt editor pager route service shutdown reboot users groups
yes true false red rev wall tee dir comm seq stat date echo halt mount strings sum mesg say open
cal note notes print run show list tr cut paste fold nl od pr col ptx tac env man at bc dc ed ex
cat less logger locale arch apropos whatis whereis
""".split())
"""Executables whose name is also an English word: on PATH, but "find my notes" is no command
line, so they need flags, a path or a subcommand word to count."""
_BARE_PROGRAMS = frozenset("""ls lsblk lscpu lsusb lspci lsof lsmod df du ps pstree htop btop iotop
atop glances dmesg uname uptime whoami hostname nproc vmstat iostat mpstat sensors neofetch
fastfetch inxi ifconfig netstat lsb_release nvidia-smi""".split())
"""Known programs that make a command line by their name alone (they print the machine's state);
a bare "python" or "docker" is as likely a topic to look up."""
_SUBCOMMANDS = frozenset("""
status list ls info show version usage logs log ps top stats get describe check scan health
events history summary config df up down start stop restart reload enable disable update
upgrade outdated doctor devices device link addr route query dump pull push fetch diff branch
iostat pods nodes services images volumes networks inspect search tree audit verify sync run
build test install add remove rm init clean lint format fmt exec attach prune rebase merge
commit stash checkout switch status-all compose container containers du free iotop list-units
scrub snapshot snapshots mounts ports peers netcheck whoami env freeze
""".split())
_CMD_FILLER = regex_cache.compile(r"(?:\s+(?:please|pls|for me|now|again|quickly))+[.!?]*$|[.!?]+$",
                         re.IGNORECASE)
_SHOW_OUTPUT = regex_cache.compile(r"^(?:(?:please|just|now)\s+)*(?:show me|give me|print|display|check|"
                          r"what does|what's|whats)(?:\s+(?:the )?(?:output of|result of))?\s+",
                          re.IGNORECASE)
_ARG_TOKEN = regex_cache.compile(r"^(?:--?[\w-]+(?:=\S+)?|[~./]\S*|\S+\.\w{1,4}|[\w@:%+=,-]+|"
                        r"'[^']*'|\"[^\"]*\")$")
_NOT_ARGS = frozenset("""the a an my your our their this that these those is are was were be
to of about for with what why how when where who do does did i you we me it and or but not
on in at into onto than then so if all some any can could would should will""".split())


def _on_path(name: str) -> bool:
    import shutil

    return shutil.which(name) is not None


def is_command_line(clause: str) -> bool:
    """A clause typed as a terminal command: a program name then only argument-shaped words
    ("zpool status please", "docker compose ps", "show me lsblk").  A known program
    (``KNOWN_PROGRAMS``) or another executable on PATH needs a flag, a path or a subcommand
    word ("git branching strategies" is a topic), or nothing if it only prints the machine's
    state (``_BARE_PROGRAMS``); an English-word program name (``_WORDY_PROGRAMS``) needs a
    flag, a path or a quoted argument — "find my notes" is a request in words."""
    c = _CMD_FILLER.sub("", _SOFT_OPENERS.sub("", clause.strip()))
    c = _SHOW_OUTPUT.sub("", c, count=1)
    words = c.split()
    if not words or len(words) > 7:
        return False
    prog, args = words[0], words[1:]
    if prog != prog.lower() and not prog.isupper() and prog[1:] != prog[1:].lower():
        return False
    prog = prog.lower()
    if any(not _ARG_TOKEN.match(a) or a.lower() in _NOT_ARGS for a in args):
        return False
    flagged = any(a.startswith(("-", "/", "~", "./", "'", '"')) for a in args)
    if prog in _WORDY_PROGRAMS:
        return flagged  # "open example.com" is a page to fetch, "sort out X" no command
    shaped = flagged or any("." in a.strip(".") for a in args)
    if not args:
        return prog in _BARE_PROGRAMS
    if prog not in KNOWN_PROGRAMS and (not re.fullmatch(r"[a-z][\w.+-]*", prog)
                                       or not _on_path(prog)):
        return False
    return shaped or any(a.lower() in _SUBCOMMANDS for a in args)

_PLEASANTRY = regex_cache.compile(
    r"^(?:hi|hello|hey|hiya|yo|good (?:morning|afternoon|evening)|thanks|thank you|thx|cheers|"
    r"please|ok|okay|great|cool|bonjour|salut|merci|hallo|guten (?:morgen|tag)|danke|hola|"
    r"buenos días|gracias)(?:\s+(?:there|so much|a lot|beaucoup|schön|sehr))?[\s,!.]*$",
    re.IGNORECASE)
_GREETING_PREFIX = regex_cache.compile(
    r"^(?:hi|hello|hey|hiya|good (?:morning|afternoon|evening)|bonjour|salut|hallo|hola)"
    r"(?:\s+there)?\s*[,!.]\s*(?=\S)", re.IGNORECASE)


_FOLLOW_UP = regex_cache.compile(
    r"^(?:and\s+)?(?:(?P<short>summari[sz]e|tell me|give me the gist|dis-moi|résume|fasse zusammen|"
    r"resume|dime)|explain|describe|translate|what does it say|how did we|what did we|"
    r"why did we|explique|erklär|explica)\b", re.IGNORECASE)
_ANAPHOR = regex_cache.compile(r"\b(?:it|that|this|them|those|these|the result|le|la|es|das|lo|eso)\b",
                      re.IGNORECASE)


_FUNCTION_WORDS = frozenset("""what what's whats which who whom whose when where why how
was were is are be been do does did done have has had can could would will shall should
might must it its it's that that's this those these them they one ones the a an of to in on
for with about from by at again exactly then so and or but now there here you your you've
you'd i i'm me my we us our say said saying tell told mean meant think thought call called
suggest suggested recommend recommended answer come came up""".split())
"""Words that carry no topic: question words, auxiliaries, pronouns, articles and the
verbs of saying and meaning."""
_SPOKEN = re.compile(r"\b(?:you|it|that|this|they)\s+(?:\w+\s+)?(?:say|said|tell|told|mean|"
                     r"meant|suggest|suggested|recommend|recommended|call|called)\b|\b(?:was|"
                     r"is)\s+(?:it|that)\b", re.IGNORECASE)


def is_topicless_question(clause: str) -> bool:
    """A question with no topic of its own that asks what was said or what "it" was ("what
    did you say?", "what was it again?", "which one was that?"): it asks about the request
    before it, never a new request.  "how are you?" asks about nothing said: not one."""
    c = clause.strip()
    words = re.findall(r"[\w']+", c.lower().replace("’", "'"))
    return (bool(words) and words[0] in _QWORDS and len(words) <= 8
            and all(w in _FUNCTION_WORDS for w in words) and bool(_SPOKEN.search(c)))


def is_follow_up(clause: str) -> bool:
    """A clause that only works on the previous clause's result ("... and tell me the top
    story", "how did we do it?", "what did you say?"): it belongs to the previous intent, not
    a new one."""
    c = _SOFT_OPENERS.sub("", clause.strip())
    if rule_target(c) is not None:
        return False
    if is_topicless_question(c):
        return True
    m = _FOLLOW_UP.match(c)
    if not m:
        return False
    if _OWN_OBJECT.match(c, m.end()):
        return False  # "tell me a joke", "summarize my tmux notes": a request of its own
    return bool(_ANAPHOR.search(c)) or (bool(m.group("short")) and len(c.split()) <= 8)


_OWN_OBJECT = regex_cache.compile(
    r"\s+(?:me\s+)?(?:a|an|some|something|anything|one|another|my|our|your|his|her|their|"
    r"un|une|des|mes|ein|eine|meine|mis|una|algo)\b", re.IGNORECASE)
"""What a follow-up verb's own object looks like: indefinite ("a joke", "something
motivational") or someone's ("my tmux notes") — not the previous clause's result."""


CAPTURE_LABEL = regex_cache.compile(
    r"^\s*(?:/gtd\s+)?(?:capture(?:\s+this)?|inbox|todo|to-do|task|new\s+task|reminder|"
    r"note\s+to\s+self|add\s+to\s+(?:my\s+|the\s+)?(?:inbox|list|todos?|to-do\s+list))"
    r"\s*[:\u2014-]\s*\S", re.IGNORECASE)
"""A request labelled as a capture ("capture: …", "todo - …", "inbox: …"): what follows is
the new entry's text, whatever it says or asks — the label is the instruction."""


def is_pleasantry(clause: str) -> bool:
    """A bare greeting/thanks with no request in it."""
    return bool(_PLEASANTRY.match(clause.strip()))


_HEDGE_PREFIX = re.compile(
    r"^(?:(?:uh+|um+|uhm|erm|er|hm+|mm+|ugh+|argh+|oops|gosh|jeez)\b[\s,.…!-]*"
    r"|(?:so|oh|ok|okay|alright|right|well|anyway|anyways|like|look|listen|honestly|basically"
    r"|actually|now)\s*[,.…!-]+\s*"
    r"|(?:(?:if|when)\s+(?:it'?s|it\s+is|that'?s)\s+not\s+too\s+much\s+(?:trouble|bother|"
    r"work)|if\s+you\s+(?:don'?t|do\s+not)\s+mind|if\s+(?:it'?s\s+)?possible|if\s+you\s+"
    r"(?:get|have)\s+a\s+(?:sec|second|minute|moment|chance)|when(?:ever)?\s+you\s+(?:get|have)"
    r"\s+a\s+(?:sec|second|minute|moment|chance)|sorry\s+to\s+(?:bother|trouble)\s+you|no\s+"
    r"rush|quick\s+(?:one|question)|one\s+more\s+thing|i\s+was\s+wondering)"
    r"(?:\s*,\s*|\s+)(?:but\s+|if\s+)?)", re.IGNORECASE)
"""Discourse fillers and hedges before a request ("so, uh, if it's not too much trouble,
could you …", "no rush, but …"): they soften the request, they are not part of it.  A word
that may also open a request ("look up …", "right now …") counts only with its comma."""
_HEDGE_ADVERB = re.compile(r"\b((?:can|could|would|will)\s+you)\s+(?:maybe|perhaps|possibly|"
                           r"kindly|just|please)\s+", re.IGNORECASE)


def strip_greeting(clause: str) -> str:
    """Drop a leading "hi," and the hedges around a request ("so, uh, could you maybe …")
    so the request gets classified on its own content."""
    c = clause.strip()
    while True:
        d = _HEDGE_PREFIX.sub("", _GREETING_PREFIX.sub("", c), count=1)
        if d == c or not d:
            break
        c = d
    return _HEDGE_ADVERB.sub(r"\1 ", c) or clause


def rule_target(clause: str) -> str | None:
    """The target that the request's *syntax* pins down, or None to defer to the classifier.

    Only unambiguous syntax: a leading ``/command``, a shell prompt or a backticked command
    line, an explicit "run …", a command line as typed into a terminal, a URL.  Everything
    phrased in words is the classifier's to decide.
    """
    c = clause.strip()
    m = _SLASH_RE.match(c) or _TOOL_LABEL.match(c)
    if m:
        name = m.group(1).lower().replace(" ", "-")
        return {"skill": "skill-creator", "recall": "recollect"}.get(name, name)
    if _QUOTED_CMD_RE.search(c) or _COMMAND_LINE_RE.match(c) or is_command_line(c):
        return "shell"
    if _URL_RE.search(c) or re.match(r"^(?:fetch|download|open|browse|visit)\s+"
                                     + _DOMAIN_RE.pattern, c, re.IGNORECASE):
        return "web"
    if _RUN_RE.match(c):
        return "shell"
    return None


# --------------------------------------------------------------------------------------------
# argument extraction
# --------------------------------------------------------------------------------------------

def _tidy(s: str) -> str:
    s = re.sub(r"\s+", " ", s).strip(" \t,;:.?!¿¡\"'")
    return s


_MONTHS = ("january|february|march|april|may|june|july|august|september|october|november|"
           "december")
_WHEN_RE = regex_cache.compile(
    r"\b(?:(?:on|by|for|before|until|next|this|coming)\s+)?(?:next |this )?"
    r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|weekend|week|month)\b|"
    r"\b(?:today|tonight|tomorrow(?: morning| afternoon| evening)?|this (?:morning|afternoon|"
    r"evening))\b|\bin (?:\d+|a|an|two|three|a few) (?:minutes?|hours?|days?|weeks?|months?)\b|"
    r"\b(?:at|by) \d{1,2}(?::\d{2})?\s*(?:am|pm)?\b|\b(?:on |by )?(?:the )?\d{1,2}(?:st|nd|rd|th)\b|"
    r"\b\d{4}-\d{2}-\d{2}\b|\b(?:on |by )?(?:" + _MONTHS + r") \d{1,2}\b|"
    r"\b(?:aujourd'hui|demain|lundi|mardi|mercredi|jeudi|vendredi|samedi|dimanche|"
    r"heute|morgen|Montag|Dienstag|Mittwoch|Donnerstag|Freitag|Samstag|Sonntag|"
    r"hoy|mañana|lunes|martes|miércoles|jueves|viernes|sábado|domingo)\b",
    re.IGNORECASE)

_NOTES_FILLER = regex_cache.compile(
    r"^(?:what )?(?:do|does|did) (?:my|the) notes? (?:\w+ )?(?:say|mention|tell me)\s*"
    r"(?:about|on|regarding)?\s*|"
    r"^(?:what|anything|everything|something)?\s*(?:did|have|do) i (?:ever )?(?:write|written|note|"
    r"noted|jot(?:ted)? down|say|said|capture|captured|record|recorded|have)\s*(?:down\s*)?"
    r"(?:about|on|regarding|concerning|in my notes about)?\s*|"
    r"^(?:please\s+)?(?:find|search|grep|show|open|read|pull up|look (?:through|in|up)|list|"
    r"get|summari[sz]e|check)\b(?:\s+me)?\s*|"
    r"\b(?:in |through |from )?(?:(?:my|the) (?:\w+ )?notes?|my (?:journal|org files|memex|"
    r"zettelkasten|diary)|the memex)\b\s*|"
    r"^(?:everything|anything|all|what)\s+(?:linked|written)?\s*(?:from|about|on)?\s*|"
    r"^(?:linked from|about|on|for|regarding|concerning|that mention|mentioning|tagged)\s+|"
    r"^(?:qu'est-ce que )?j'ai (?:écrit|noté) sur\s*|^(?:cherche|trouve)(?: dans)?\s*|"
    r"\bmes notes\b\s*(?:sur|à propos de)?\s*|"
    r"^was habe ich über\s*|\bnotiert\b|^(?:such|suche|finde)(?: in)?\s*|"
    r"\bmeinen? Notizen\b\s*(?:über|zu|nach)?\s*|"
    r"^(?:busca|encuentra)(?: en)?\s*|\bmis notas\b\s*(?:sobre|de)?\s*|"
    r"^(?:qué )?(?:escribí|anoté) sobre\s*|^lo que\s*",
    re.IGNORECASE)


def _notes_args(c: str) -> dict:
    q = c
    for _ in range(6):
        new = _NOTES_FILLER.sub("", q).strip(" ,?.!")
        if new == q:
            break
        q = new
    q = re.sub(r"^(?:about|on|for|regarding|des|sur|über|sobre|nach)\s+", "", q, flags=re.I)
    q = q.strip()
    if len(q) >= 2 and q[0] == q[-1] and q[0] in "'\"`":
        q = q[1:-1]
    return {"query": _tidy(q) or _tidy(c)}


_CMD_MAP: list[tuple[re.Pattern[str], str]] = [
    (regex_cache.compile(r"\bdisk (?:space|usage)|free space|hard drive|Speicherplatz|espacio en disco|"
                r"espace disque", re.I), "df -h"),
    (regex_cache.compile(r"\bmemory|\bRAM\b|Arbeitsspeicher|mémoire|memoria", re.I), "free -h"),
    (regex_cache.compile(r"\b(?:running )?processes|processus|Prozesse|procesos", re.I), "ps aux"),
    (regex_cache.compile(r"\buptime|been up\b", re.I), "uptime"),
    (regex_cache.compile(r"\bcurrent (?:git )?branch\b", re.I), "git branch --show-current"),
    (regex_cache.compile(r"\buncommitted changes\b", re.I), "git status"),
    (regex_cache.compile(r"\bip address\b", re.I), "ip addr"),
]


def _shell_args(c: str) -> dict:
    args: dict = {}
    m = re.search(r"`([^`]+)`", c)
    if m:
        args["command"] = m.group(1).strip()
        return args
    m = re.match(r"^\$\s+(.+)$", c)
    if m:
        args["command"] = m.group(1).strip()
        return args
    body = c
    cwd = re.search(r"\s+in (?:the |my )?([\w./~-]+) (?:project|repo|repository|folder|"
                    r"directory)\b", body, re.I)
    if cwd:
        args["cwd"] = cwd.group(1)
        body = body[:cwd.start()] + body[cwd.end():]
    m = re.match(r"^(?:please\s+)?(?:run|execute|exec|lance|exécute|ejecuta|führe)\s+(.+?)"
                 r"(?:\s+aus)?$", body, re.I)
    if m:
        cmd = _tidy(m.group(1))
        if not re.match(r"^(?:the|a|my|le|la|el|das|den)\b", cmd, re.I):
            args["command"] = cmd
        else:
            args["description"] = cmd
        return args
    m = re.search(r"\bgit (?:status|log|diff|pull|push|branch|stash|fetch|show)\b", body, re.I)
    if m:
        args["command"] = m.group(0).lower()
        return args
    m = re.match(r"^(?:ls|df|du|ps|grep|rg|cat|tail|head|make|pip|npm|cargo|docker|kubectl|"
                 r"systemctl|journalctl|uptime|free|whoami|pwd|mkdir|rm|mv|cp|chmod|curl|wget|"
                 r"ssh|python3?|pytest|uv)\b.*", body, re.I)
    if m:
        args["command"] = _tidy(m.group(0))
        return args
    m = re.search(r"\blist (?:the |all )?(?:files|contents)(?: in| of)? (\S+)", body, re.I)
    if m:
        args["command"] = f"ls {m.group(1).rstrip('?.!,')}"
        return args
    for pattern, cmd in _CMD_MAP:
        if pattern.search(body):
            args["command"] = cmd
            return args
    return args


def _gtd_args(c: str) -> dict:
    low = c.lower()
    asks = low.rstrip().endswith("?") or _first_word(c) in _QWORDS | {"anything", "any"}
    if re.search(r"\bagenda\b|on my plate|what do i have|what'?s (?:due|overdue)|my tasks|"
                 r"à faire aujourd|steht heute|tengo pendiente|\boverdue\b", low) or (
            asks and re.search(r"\bdue\b", low)
            and _first_word(c) not in ("when", "where", "why", "how", "who")):
        # "anything due before friday?": a view; "when is <one thing> due?" asks about it
        op = "agenda"
    elif re.search(r"\bnext action\b|work on next|what should i do next", low):
        op = "next"
    elif re.search(r"\bweekly review\b|\breview my (?:tasks|projects|week)\b", low):
        op = "review"
    elif re.search(r"\bmark\b|\bas (?:done|complete|finished|todo|cancelled)\b|\bcancel\b", low):
        op = "todo"
    elif re.search(r"\bwaiting (?:on|for)\b", low):
        op = "waiting"
    elif re.search(r"\bdeadlines?\b|\bdue (?:by|on)\b|\bfrist\b", low):
        op = "deadline"
    elif re.search(r"\bschedul|\bplanifie|\bprograma|\bplane\b", low):
        op = "schedule"
    else:
        op = "capture"
    args: dict = {"op": op}
    when = _WHEN_RE.search(c)
    if when:
        args["when"] = _tidy(when.group(0))
    task: str | None = None
    if op == "todo":
        m = re.search(r"\bmark (?:the |my )?(.+?)(?: task)? as (\w+)", c, re.I)
        if m:
            task, args["state"] = m.group(1), m.group(2).upper()
    elif op == "next":
        m = re.search(r"\b(?:on|for) (?:the |my )?(.+?)(?: project)?\s*[?.!]?$", c, re.I)
        task = m.group(1) if m else None
    elif op in ("capture", "schedule", "deadline", "waiting"):
        m = (re.search(r"\b(?:remind me|task|todo|to-do|reminder|TODO)\s+(?:to|for|about|:)\s*"
                       r"(.+)$", c, re.I)
             or re.search(r"\b(?:remind me|recuérdame|rappelle-moi|erinnere mich)\s+(?:to |de |"
                          r"d'|an |daran,? )?(.+)$", c, re.I)
             or re.search(r"^(?:add|put|capture|schedule|ajoute|füge|añade|agrega)\s+(.+?)"
                          r"(?:\s+(?:to|on|in) (?:my|the) (?:\w+ )?(?:list|agenda|inbox|todos?)"
                          r"\b.*)?$", c, re.I)
             or re.search(r"\bwaiting (?:on|for) (.+)$", c, re.I))
        task = m.group(1) if m else None
    if task:
        if when:
            task = task.replace(when.group(0), "")
        task = re.sub(r"\s+(?:on|to|for) (?:my|the) (?:\w+ )?(?:list|agenda)\b.*$", "", task,
                      flags=re.I)
        task = _tidy(task)
        if task:
            args["task"] = task
    return args


def _web_args(c: str) -> dict:
    m = _URL_RE.search(c)
    if m:
        url = m.group(0).rstrip(".,;:!?")
        return {"url": url if url.lower().startswith("http") else f"https://{url}"}
    m = re.match(r"^(?:fetch|download|open|browse|visit)\s+(" + _DOMAIN_RE.pattern + ")", c, re.I)
    if m:
        return {"url": f"https://{m.group(1)}"}
    q = re.sub(r"^(?:please\s+)?(?:search|look up|look|find|check|google|browse|get|fetch|cherche|"
               r"recherche|such|suche|schau|busca|consulta)\b\s*(?:for|up|nach)?\s*", "", c,
               flags=re.I)
    q = re.sub(r"\b(?:on |in )?(?:the web|online|the internet|on the net|google|wikipedia|"
               r"sur (?:le web|internet)|en ligne|im (?:Internet|Netz|Web)|en (?:la web|internet))"
               r"\b", "", q, flags=re.I)
    q = re.sub(r"^(?:for|up|nach)\s+", "", _tidy(q), flags=re.I)
    return {"query": _tidy(q) or _tidy(c)}


def _slug(s: str) -> str:
    return re.sub(r"[^\w]+", "-", s.strip().lower()).strip("-")


def _foundry_args(c: str) -> dict:
    m = (re.search(r"\b(?:called|named|titled|appelé|nommé|namens|llamado|llamada)\s+[\"'`]?"
                   r"([\w.-]+(?:\s+[\w.-]+){0,5}?)[\"'`]?\s*(?:$|[.?!]|\s+(?:with|that|which|"
                   r"and|avec|mit|con|for|in)\b)", c, re.I)
         or re.search(r"\bproject:\s*([\w .-]+)$", c, re.I)
         or re.search(r"\b(?:for|about|pour|für|para)\s+(?:my |the |a |an |mon |ma |mein |"
                      r"meine |mi )?(.+?)(?:\s+(?:with|that|which|and|avec|mit|con)\b.*)?\s*"
                      r"[.?!]?$", c, re.I))
    args: dict = {}
    if m:
        args["name"] = _slug(m.group(1))
    with_ = re.search(r"\bwith (.+)$", c, re.I)
    if with_:
        args["with"] = _tidy(with_.group(1))
    return args


def _skill_args(c: str) -> dict:
    m = (re.search(r"\b(?:skill|capability|ability|compétence|Skill|Fähigkeit|habilidad)\b"
                   r"\s*(?:that|which|to|for|:|qui|pour|der|die|das|que|para)\s*(.+)$", c, re.I)
         or re.search(r"\b(?:learn (?:how )?to|teach yourself(?: to)?|apprends à|aprende a|"
                      r"bring dir bei,?)\s*(.+)$", c, re.I))
    return {"description": _tidy(m.group(1) if m else c)}


def _recollect_args(c: str) -> dict:
    cue = re.sub(r"^/recollect\b\s*", "", c, flags=re.I)
    cue = re.sub(r"^(?:what was |do you remember |remember |i vaguely remember |"
                 r"there was something |tu te souviens (?:de )?|weißt du noch,? |"
                 r"te acuerdas (?:de )?)", "", cue, flags=re.I)
    cue = re.sub(r",?\s*i can'?t (?:quite )?remember (?:where|when|what)\b.*$", "", cue,
                 flags=re.I)
    return {"cue": _tidy(cue) or _tidy(c)}


def extract_args(target: str, clause: str) -> dict:
    """Arguments for ``target`` pulled from the clause text (best effort, never raises)."""
    c = clause.strip()
    if target == "notes":
        return _notes_args(c)
    if target == "shell":
        return _shell_args(c)
    if target == "gtd":
        # a coarse hint (op, task, when) beside the clause, which travels as the intent's
        # text: the gtd skill's own parser owns the slots and may ignore this
        return _gtd_args(c)
    if target == "review":
        return {}  # the clause itself goes to the review skill
    if target == "web":
        return _web_args(c)
    if target == "foundry":
        return _foundry_args(c)
    if target == "skill-creator":
        return _skill_args(c)
    if target == "recollect":
        return _recollect_args(c)
    return {"message": _tidy(c) or c}
