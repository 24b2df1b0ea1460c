"""Whether a text the agent sent can reach a system call at all.

A path, command line, directory or environment value goes to the OS as bytes: a NUL byte ends
it early (Python refuses it with ValueError) and a lone surrogate (`"\\ud800"`, valid in JSON)
has no UTF-8 encoding (UnicodeEncodeError). Either would surface as the SDK's traceback and an
internal error naming no field, so the bridge refuses it first as invalid params naming the
field (ADR 0122).

Such a value, up to a frame's 16 MiB, is repeated only by its start (`quoted_start`): in such a
refusal, and in every answer or log line of the bridge that names a command, a path, a
directory, an environment variable or another text the agent chose.
"""

from __future__ import annotations

import os
from collections.abc import Callable

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


# How much of a value the agent sent an answer or a log line repeats: an 8 MiB command with a
# NUL in it came back whole, and a hosted command was logged whole (up to 128 KiB a line).
QUOTED_CHARS = 200


def quoted_start(value: str, quote: Callable[[str], str] = str) -> str:
    """`value` as an answer or the log repeats it: whole (`quote`d) up to QUOTED_CHARS
    characters, else its first QUOTED_CHARS (`quote`d) and its length, `abc… (8388608
    characters)`. A log line passes `repr`, as it quotes every name the agent chose
    (`log_text`): `'abc'… (8388608 characters)`."""
    if len(value) <= QUOTED_CHARS:
        return quote(value)
    return f"{quote(value[:QUOTED_CHARS])}… ({len(value)} characters)"


def refuse_what_the_os_cannot_take(fields: list[tuple[str, str]]) -> None:
    """Invalid params naming the first of `fields` (name, value) the OS cannot take, quoting
    at most QUOTED_CHARS characters of it."""
    for name, value in fields:
        problem = os_text_problem(value)
        if problem is not None:
            raise RequestError.invalid_params({name: quoted_start(value), "reason": problem})
