"""The guard: deterministic code that decides what the agent may do.

An LLM proposes :class:`Action` s; :meth:`Guard.check` answers allow / ask / deny with a
reason, :meth:`Guard.last_mile` re-validates the exact argv / path just before execution.
Around it: shell allowlist + denylist and a boxed runner, memex path confinement, secret
redaction, privacy tags, quoting of untrusted text, and the approval queue.
"""

from typing import TYPE_CHECKING

_WHERE: dict[str, str] = {
    **dict.fromkeys(("UNTRUSTED_ORIGINS", "Action", "Decision", "GuardContext",
                     "is_untrusted_origin", "untrusted_origin"), "action"),
    **dict.fromkeys(("ApprovalQueue", "Pending", "Resolution"), "approvals"),
    "Guard": "core",
    **dict.fromkeys(("ApprovalError", "GuardDenied", "GuardError", "ShellError",
                     "UnsafePathError"), "errors"),
    "confine": "paths",
    **dict.fromkeys(("GuardPolicy", "ShellPolicy", "Verdict", "WebPolicy"), "policy"),
    **dict.fromkeys(("filter_private", "is_private", "normalise_tag", "private_tags"),
                    "privacy"),
    **dict.fromkeys(("SECRET_KINDS", "redact"), "secrets"),
    **dict.fromkeys(("ShellCheck", "ShellResult", "check_argv", "minimal_env",
                     "normalise_command", "run_shell"), "shell"),
    **dict.fromkeys(("UNTRUSTED_PREAMBLE", "quote_untrusted", "unquote_untrusted"),
                    "untrusted"),
}
"""Public name → the submodule defining it.  Imported on first use (module ``__getattr__``,
as the package root does): the shell policy's tables, the secret patterns and the argument
grammars (~50 ms CPU) are read by a process that checks a command, not by every ``ask``."""


def __getattr__(name: str) -> object:
    where = _WHERE.get(name)
    if where is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(f"{__name__}.{where}"), name)
    globals()[name] = value
    return value


__all__ = [
    "SECRET_KINDS",
    "UNTRUSTED_ORIGINS",
    "UNTRUSTED_PREAMBLE",
    "Action",
    "ApprovalError",
    "ApprovalQueue",
    "Decision",
    "Guard",
    "GuardContext",
    "GuardDenied",
    "GuardError",
    "GuardPolicy",
    "Pending",
    "Resolution",
    "ShellCheck",
    "ShellError",
    "ShellPolicy",
    "ShellResult",
    "UnsafePathError",
    "Verdict",
    "WebPolicy",
    "check_argv",
    "confine",
    "filter_private",
    "is_private",
    "is_untrusted_origin",
    "minimal_env",
    "normalise_command",
    "normalise_tag",
    "private_tags",
    "quote_untrusted",
    "redact",
    "run_shell",
    "unquote_untrusted",
    "untrusted_origin",
]

if TYPE_CHECKING:
    from .action import (
        UNTRUSTED_ORIGINS,
        Action,
        Decision,
        GuardContext,
        is_untrusted_origin,
        untrusted_origin,
    )
    from .approvals import ApprovalQueue, Pending, Resolution
    from .core import Guard
    from .errors import ApprovalError, GuardDenied, GuardError, ShellError, UnsafePathError
    from .paths import confine
    from .policy import GuardPolicy, ShellPolicy, Verdict, WebPolicy
    from .privacy import filter_private, is_private, normalise_tag, private_tags
    from .secrets import SECRET_KINDS, redact
    from .shell import (
        ShellCheck,
        ShellResult,
        check_argv,
        minimal_env,
        normalise_command,
        run_shell,
    )
    from .untrusted import UNTRUSTED_PREAMBLE, quote_untrusted, unquote_untrusted

