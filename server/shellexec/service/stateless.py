"""The stateless use cases: fold a list of updates, summarize an output. Nothing is stored.

Their input is valid already (`shellexec.api.validation` checks counts, sizes and the agent).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from shellexec import normalize
from shellexec.normalize import OutputSummary, ShellOutput, ShellRecord
from shellexec.projection import Masking


def normalize_updates(updates: Sequence[Mapping[str, Any]], agent: str,
                      masking: Masking) -> ShellRecord:
    """Folds the updates of one tool call; the record masked only when the caller asked (it
    may store what it gets back)."""
    return masking.record(normalize.shell_record(normalize.fold_all(updates, agent=agent or None)))


def summarize_output(output: ShellOutput) -> OutputSummary:
    return normalize.summarize(output)
