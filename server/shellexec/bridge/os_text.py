"""Whether a text the agent sent can reach a system call at all.

A path, command line, directory or environment value goes to the OS as bytes: a NUL byte ends
it early (Python refuses it with ValueError) and a lone surrogate (`"\\ud800"`, valid in JSON)
has no UTF-8 encoding (UnicodeEncodeError). Either would surface as the SDK's traceback and an
internal error naming no field, so the bridge refuses it first as invalid params naming the
field (ADR 0122).
"""

from __future__ import annotations

import os

from acp.exceptions import RequestError


def os_text_problem(value: str) -> str | None:
    """Why `value` cannot be passed to the OS, or None when it can."""
    if "\0" in value:
        return "contains a NUL byte"
    try:
        os.fsencode(value)
    except UnicodeEncodeError:
        return "contains a lone surrogate, which has no encoding for the OS"
    return None


# How much of a refused value the answer repeats: an 8 MiB command with a NUL in it came back
# whole.
QUOTED_CHARS = 200


def refuse_what_the_os_cannot_take(fields: list[tuple[str, str]]) -> None:
    """Invalid params naming the first of `fields` (name, value) the OS cannot take, quoting
    at most QUOTED_CHARS characters of it."""
    for name, value in fields:
        problem = os_text_problem(value)
        if problem is not None:
            shown = value if len(value) <= QUOTED_CHARS else (
                f"{value[:QUOTED_CHARS]}… ({len(value)} characters)")
            raise RequestError.invalid_params({name: shown, "reason": problem})
