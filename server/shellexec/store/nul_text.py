"""Text that PostgreSQL's `text` type could not hold as it is: it refuses the NUL character.

Agents' output (and the ids and titles they choose) may contain NUL, and SQLite keeps it, so
on PostgreSQL such text is stored escaped: NUL becomes ESCAPE + "0" and ESCAPE itself ESCAPE +
"1". ESCAPE is U+FFFF, a noncharacter that real text almost never holds, so nearly every
value is stored as it is and costs only the scan that finds neither character. The escaping
is applied by the fields of `store.models` and by `Statements`, only when the database is
PostgreSQL; SQLite stores the text untouched.
"""

from __future__ import annotations

NUL = "\x00"
ESCAPE = "\uffff"
_ESCAPED_NUL = ESCAPE + "0"
_ESCAPED_ESCAPE = ESCAPE + "1"
# The most characters `escape` makes of one: a bounded column holds this many times its bound.
GROWTH = max(len(_ESCAPED_NUL), len(_ESCAPED_ESCAPE))


def escape(text: str) -> str:
    """`text` with no NUL left, reversibly (`unescape`)."""
    if NUL not in text and ESCAPE not in text:
        return text
    return text.replace(ESCAPE, _ESCAPED_ESCAPE).replace(NUL, _ESCAPED_NUL)


def unescape(stored: str) -> str:
    """The text `escape` was given."""
    if ESCAPE not in stored:
        return stored
    # Every ESCAPE in `stored` starts a pair, and pairs do not overlap: the NUL pairs found
    # first are real ones, and the ESCAPEs left all begin ESCAPE pairs.
    return stored.replace(_ESCAPED_NUL, NUL).replace(_ESCAPED_ESCAPE, ESCAPE)
