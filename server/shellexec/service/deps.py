"""The small dependencies every use case takes: a clock and an id factory.

Both are passed in, so tests can fix time and identifiers.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable

# Microseconds since the Unix epoch, UTC.
Clock = Callable[[], int]
# Makes an identifier for a prefix such as "ses".
IdFactory = Callable[[str], str]


def system_clock() -> int:
    return time.time_ns() // 1000


def random_id(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex}"
