"""Rules on request fields that more than one part of shellexec checks.

The service enforces them; clients that run in this repository (the bridge) check them before
doing work the service would later refuse. Keeping each rule in one place means the two cannot
drift apart. Every number they use is in `shellexec.rules.limits`, the module that mirrors
the "Limits" table of docs/api.md.
"""

from __future__ import annotations

from shellexec.rules.limits import MAX_AGENT_CHARS
from shellexec.rules.session_fields import TASK_ID_RULE, agent_problem, task_id_problem

__all__ = ["MAX_AGENT_CHARS", "TASK_ID_RULE", "agent_problem", "task_id_problem"]
