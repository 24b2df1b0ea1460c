"""What CreateSession accepts as a task id and an agent name."""

from __future__ import annotations

import re

_TASK_ID = re.compile(r"[A-Za-z0-9_.:-]{1,128}")
TASK_ID_RULE = "1 to 128 letters, digits, '_', '-', '.' or ':'"
MAX_AGENT_CHARS = 64


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
