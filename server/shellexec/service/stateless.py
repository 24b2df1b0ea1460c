"""The stateless use cases: fold a list of updates, summarize an output. Nothing is stored.

Their input is valid already (`shellexec.api.validation` checks counts, sizes and the agent).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from shellexec import normalize
from shellexec.normalize import OutputSummary, ShellOutput, ShellRecord


def normalize_updates(updates: Sequence[Mapping[str, Any]], agent: str) -> ShellRecord:
    """Folds the updates of one tool call."""
    return normalize.shell_record(normalize.fold_all(updates, agent=agent or None))


def summarize_output(output: ShellOutput) -> OutputSummary:
    return normalize.summarize(output)
