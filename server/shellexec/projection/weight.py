"""About how many bytes a message or a feed event takes, in a response and in memory.

Pages of messages, a watcher's queue of live events and a replay batch are bounded by this
weight as well as by their count (ADR 0133): one message may carry up to 256 KiB in each of its
texts, so a count alone bounds nothing. A weight is a fixed part for the ids, times, status and
output summary (measured: a projected message with short texts takes about 1 KiB of Python
objects) plus the bytes of the texts, which the store can count without handing them over.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable

from shellexec.projection.message import MessageView

# What an event, or a message's fields other than its texts, takes.
FIXED_WEIGHT: int = 1024


def message_weight(text_bytes: int) -> int:
    """The weight of a message whose content, title, command and work dir hold `text_bytes`
    bytes in all."""
    return FIXED_WEIGHT + text_bytes


def view_weight(view: MessageView | None) -> int:
    """The weight of an event carrying `view` (a turn event, a heartbeat: the fixed part).
    Its texts count as the memory they take (1, 2 or 4 bytes a character, as Python stores
    them, which is at most their UTF-8 size that the store counts)."""
    if view is None:
        return FIXED_WEIGHT
    texts = [view.content, view.title]
    if view.shell_exec is not None:
        texts += [view.shell_exec.command, view.shell_exec.work_dir]
    return message_weight(sum(map(sys.getsizeof, texts)))


def fitting(weights: Iterable[int], budget: int) -> int:
    """How many of the leading `weights` fit in `budget` together: at least one (a single
    item over the budget still goes, alone, or nothing could ever be read past it)."""
    total = 0
    count = 0
    for weight in weights:
        total += weight
        if total > budget and count > 0:
            break
        count += 1
    return count
