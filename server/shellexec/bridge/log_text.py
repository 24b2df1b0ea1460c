"""Text the agent chose, made fit for the bridge's log: one line, no control characters.

The log is read by people on a terminal and by programs that split it into lines. A line break
in an agent's text would start a line of the agent's making that reads as the bridge's own
(`shellexec bridge: published 999 update(s)`), and a carriage return or an escape sequence
could overwrite what a terminal shows. So a name the agent chose (a path, an option id) is
logged quoted (`%r`), a free text (an error's message and data) `escaped`, and each line of
the agent's stderr the bridge relays `escaped_line`: a tab is kept, every other control
character, and a line or paragraph separator, is shown as its escape (`\\n`, `\\r`, `\\x1b`,
`\\u2028`). The log's formatter escapes each message as well, whatever put the text there
(ADR 0122).
"""

from __future__ import annotations

import re
from typing import Final

# C0 but the tab, DEL, C1, and the two separators some readers break lines at.
_CONTROL: Final = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029]")


def escaped(text: str) -> str:
    """`text` with each control character (but the tab) shown as its escape."""
    return _CONTROL.sub(_escape, text)


def _escape(found: re.Match[str]) -> str:
    return found.group().encode("unicode_escape").decode("ascii")


def escaped_line(line: bytes) -> bytes:
    """One line of the agent's stderr as the log shows it: its `\\r\\n` ending taken as a line
    end, bytes that are not UTF-8 shown as `\\xff`, control characters escaped."""
    if line.endswith(b"\r"):
        line = line[:-1]
    return escaped(line.decode("utf-8", "backslashreplace")).encode("utf-8")
