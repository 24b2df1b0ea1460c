"""Who is calling, and which tasks they may see.

The gRPC interceptor (`api.auth`) checks a call's scope; the use cases check its task, since
only they know which task a session belongs to. A session, message or task the caller may not
see answers exactly as one that does not exist (ADR 0050).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fnmatch import fnmatchcase

from shellexec.vocabulary import SCOPE_ADMIN, SCOPE_READ, SCOPES, Scope


@dataclass(frozen=True, slots=True)
class Caller:
    """An authenticated caller: its token's name, scopes and task-id patterns (none: every
    task)."""

    name: str
    scopes: frozenset[Scope]
    task_patterns: tuple[str, ...] = ()

    def has_any(self, scopes: frozenset[Scope]) -> bool:
        """Whether one of `scopes` is granted (`admin` grants every scope)."""
        return SCOPE_ADMIN in self.scopes or not scopes.isdisjoint(self.scopes)

    def reads(self) -> bool:
        """Whether the caller may read what sessions hold (messages, output), not only
        write it."""
        return self.has_any(frozenset({SCOPE_READ}))

    def sees(self, task_id: str) -> bool:
        """Whether the caller may see this task (glob patterns, matched case-sensitively)."""
        return not self.task_patterns or any(
            fnmatchcase(task_id, pattern) for pattern in self.task_patterns)

    def task_prefixes(self) -> tuple[str, ...] | None:
        """The texts every task id the caller sees starts with (what each pattern has before
        its first wildcard), shortest first and none starting with another (`repo-` covers
        `repo-a`), for a store to narrow a scan with; None when that narrows nothing (no
        patterns, or one starting with a wildcard). `sees` stays the rule."""
        prefixes = sorted({_GLOB_WILDCARD.split(pattern, maxsplit=1)[0]
                           for pattern in self.task_patterns}, key=lambda text: (len(text), text))
        if not prefixes or not all(prefixes):
            return None
        kept: list[str] = []
        for prefix in prefixes:
            if not prefix.startswith(tuple(kept)):
                kept.append(prefix)
        return tuple(kept)


# Where a task pattern's literal text ends (`service.tokens` allows `*`, `?` and `[...]`).
_GLOB_WILDCARD = re.compile(r"[*?\[]")


# The caller when authentication is off (loopback only): every scope, every task.
UNRESTRICTED = Caller("", frozenset(SCOPES))
# The caller no interceptor vouched for: no scope, and a pattern no task id matches (ids are
# never empty), so it sees nothing.
NOBODY = Caller("", frozenset(), ("",))
