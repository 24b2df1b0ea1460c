"""When the store trims a stream's chunk rows to the retained text.

Appending a delta adds one `OutputChunk` row, so the rows of a stream may hold more than the
retained bound (readers bound the joined rows again). Once they hold more than
`COMPACT_AT_BYTES`, the writer deletes the oldest rows the newest `MAX_FIELD_BYTES` do not
reach: the retained text is the newest bytes of the rows, so nothing is rewritten and the
freed pages take the next chunks (ADR 0024). Only when the rows left would still hold more
(one huge chunk) is the stream rewritten as its retained text. Twice the bound keeps the
scan of chunk sizes amortized: it happens at most once per `MAX_FIELD_BYTES` appended.
"""

from __future__ import annotations

from typing import Final

from shellexec.normalize import MAX_FIELD_BYTES

COMPACT_AT_BYTES: Final = 2 * MAX_FIELD_BYTES
KEEP_BYTES: Final = MAX_FIELD_BYTES


def needs_compaction(stored_bytes: int) -> bool:
    """Whether a stream whose chunk rows hold `stored_bytes` must be trimmed."""
    return stored_bytes > COMPACT_AT_BYTES
