"""The small dependencies every use case takes: a clock and an id factory.

Both are passed in, so tests can fix time and identifiers.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable

# Microseconds since the Unix epoch, UTC.
Clock = Callable[[], int]
# Makes an identifier for a prefix such as "ses".
IdFactory = Callable[[str], str]


def system_clock() -> int:
    return time.time_ns() // 1000


def time_ordered_id(prefix: str, now_ns: Callable[[], int] = time.time_ns) -> str:
    """`prefix_` and 32 hexadecimal digits: the milliseconds since the epoch (12 digits),
    then 80 random bits. Ids made later sort later, so each new row's key lands at the end
    of its index instead of on a random page (ADR 0113); the random part keeps them
    unguessable."""
    return f"{prefix}_{now_ns() // 1_000_000:012x}{os.urandom(10).hex()}"
