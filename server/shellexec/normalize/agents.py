"""Which agent an optional hint names: `"gemini-cli"`, `"Qwen Code"` and `"qwen"` name the same.

A hint is the Normalize request's `agent` field or a session's `agent`. It only ever helps: every
agent rule also recognises the agent's own shape, and a hint that names no known agent (or no
hint at all) leaves every rule to the shapes. The names are `shellexec.vocabulary.AGENT_NAMES`;
an alias (`AGENT_ALIASES`, the whole name in lower case) wins, else the first word of the hint
(split on spaces, `-`, `_`, `.`, `@` and `/`) that is a known name, so `codex-acp@0.9` is Codex
and `mistral-vibe` is Vibe.
"""

from __future__ import annotations

import re

from shellexec.vocabulary import AGENT_ALIASES, AGENT_NAMES, AgentName

_WORDS = re.compile(r"[\s\-_.@/]+")


def agent_of(hint: str | None) -> AgentName | None:
    """The known agent `hint` names, or None (no hint, or an agent the rules do not know)."""
    if hint is None:
        return None
    name = hint.strip().lower()
    alias = AGENT_ALIASES.get(name) or AGENT_ALIASES.get(_WORDS.sub("-", name))
    if alias is not None:
        return alias
    words = _WORDS.split(name)
    return next((known for word in words for known in AGENT_NAMES if word == known), None)
