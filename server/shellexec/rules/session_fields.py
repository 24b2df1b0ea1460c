"""What CreateSession accepts as a task id and an agent name."""

from __future__ import annotations

import re

from shellexec.rules.limits import (
    ID_CHARACTERS,
    MAX_AGENT_CHARS,
    MAX_TASK_ID_CHARS,
    MIN_TASK_ID_CHARS,
)

_TASK_ID = re.compile(f"[{ID_CHARACTERS}]{{{MIN_TASK_ID_CHARS},{MAX_TASK_ID_CHARS}}}")
TASK_ID_RULE = f"{MIN_TASK_ID_CHARS} to {MAX_TASK_ID_CHARS} letters, digits, '_', '-', '.' or ':'"


def task_id_problem(task_id: str) -> str | None:
    """Why `task_id` cannot name a task (a phrase to follow the field's name), or None."""
    if not task_id:
        return "is required"
    if not _TASK_ID.fullmatch(task_id):
        return f"must be {TASK_ID_RULE}"
    return None


def agent_problem(agent: str) -> str | None:
    """Why `agent` cannot name a session's agent (a phrase to follow the field's name), or
    None."""
    if len(agent) > MAX_AGENT_CHARS:
        return f"must be at most {MAX_AGENT_CHARS} characters"
    return None
