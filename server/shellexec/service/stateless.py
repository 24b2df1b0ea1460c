"""The stateless use cases: fold a list of updates, summarize an output. Nothing is stored."""

from __future__ import annotations

from collections.abc import Sequence

from shellexec import normalize
from shellexec.normalize import MAX_FIELD_BYTES, OutputSummary, ShellOutput, ShellView
from shellexec.rules import agent_problem
from shellexec.service.errors import InvalidArgumentError

MAX_UPDATES = 1000
MAX_UPDATE_BYTES = 4 * 1024 * 1024


def normalize_updates(updates: Sequence[object], sizes: Sequence[int],
                      agent: str) -> ShellView:
    """Folds the updates of one tool call; `sizes` are their encoded sizes in bytes."""
    if not updates:
        raise InvalidArgumentError("updates", "must hold at least one ACP update")
    if len(updates) > MAX_UPDATES:
        raise InvalidArgumentError("updates", f"must hold at most {MAX_UPDATES} updates")
    if (problem := agent_problem(agent)) is not None:
        raise InvalidArgumentError("agent", problem)
    for index, (update, size) in enumerate(zip(updates, sizes, strict=True)):
        if not isinstance(update, dict):
            raise InvalidArgumentError(f"updates[{index}]", "must be a JSON object")
        if size > MAX_UPDATE_BYTES:
            raise InvalidArgumentError(
                f"updates[{index}]", f"is {size} bytes; the limit is {MAX_UPDATE_BYTES}")
    return normalize.view(normalize.fold_all(updates, agent=agent or None))


def summarize_output(output: ShellOutput) -> OutputSummary:
    for field, text in (("output.stdout", output.stdout), ("output.stderr", output.stderr)):
        if text is not None and len(text.encode("utf-8", "surrogatepass")) > MAX_FIELD_BYTES:
            raise InvalidArgumentError(field, f"must be at most {MAX_FIELD_BYTES} bytes")
    return normalize.summarize(output)
