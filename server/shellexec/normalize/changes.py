"""How a stream changed between two states: what the store must write.

The store keeps each stream as rows it appends to, and bounds the joined rows with
`bound_tail` when it reads them. After a fold it asks `body_change(before, after)`:

| answer | meaning | store action |
| --- | --- | --- |
| `Unchanged()` | same text | nothing |
| `Appended(text)` | new text == `bound_tail(old text + text)` | append one row |
| `Replaced(text)` | new text is `text` (None: the stream is gone) | rewrite the stream |

`body_change` answers an append in O(len(appended text)), so a live delta costs the store
what the delta costs, not what the stream holds.
"""

from __future__ import annotations

from dataclasses import dataclass

from shellexec.normalize.text import OutputText


@dataclass(frozen=True, slots=True)
class Unchanged:
    """The stream holds the same text as before."""


@dataclass(frozen=True, slots=True)
class Appended:
    """`text` was appended; the new text is `bound_tail(previous text + text)`."""

    text: str


@dataclass(frozen=True, slots=True)
class Replaced:
    """The stream now holds exactly `text`; None when it no longer exists."""

    text: str | None


BodyChange = Unchanged | Appended | Replaced


def body_change(before: OutputText | None, after: OutputText | None) -> BodyChange:
    """The cheapest correct way to turn the stored `before` into `after` (module table)."""
    if after is before:
        return Unchanged()
    if after is None:
        return Replaced(None)
    if before is None:
        return Replaced(after.text)
    appended = after.appended_since(before)
    if appended is not None:
        return Appended(appended) if appended else Unchanged()
    return Unchanged() if after.text == before.text else Replaced(after.text)
