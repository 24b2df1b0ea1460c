"""When the store rewrites a stream's chunk rows as the stream's retained text.

Appending a delta adds one `OutputChunk` row, so the rows of a stream may hold more than the
retained bound (readers bound the joined rows again). Once they hold more than
`COMPACT_AT_BYTES`, the writer replaces them with the retained text: twice the bound keeps
compaction amortized, it happens at most once per `MAX_FIELD_BYTES` appended.
"""

from __future__ import annotations

from typing import Final

from shellexec.normalize import MAX_FIELD_BYTES

COMPACT_AT_BYTES: Final = 2 * MAX_FIELD_BYTES


def needs_compaction(stored_bytes: int) -> bool:
    """Whether a stream whose chunk rows hold `stored_bytes` must be rewritten."""
    return stored_bytes > COMPACT_AT_BYTES
