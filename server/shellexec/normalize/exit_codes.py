"""Exit codes: where each agent puts them, which source wins, and what counts as one.

| rank | source | agents |
| --- | --- | --- |
| 4 `HOST` | `exitStatus.exitCode` of a `terminal_update` | bridge-hosted terminals, v2 |
| 3 `TERMINAL` | `_meta.terminal_exit.exit_code` | Codex, Claude (terminal mode) |
| 2 `NATIVE` | `rawOutput.exit_code` | Codex |
| 2 `NATIVE` | `rawOutput.metadata.exit` | OpenCode |
| 2 `NATIVE` | `rawOutput.details.exitCode` | OMP (only when nonzero) |
| 1 `MARKUP` | `<return-code>N</return-code>` in `rawOutput.output` | Auggie |
| 1 `MARKUP` | an agent's own exit sentence, where it writes it (`text_exits`) | Qwen, Goose, ... |

Goose's `rawOutput.exit_code`, Vibe's JSON `returncode` and Cursor's `exitCode` reach rank 2
as `exit_code` once `dialects` has read them.

A value counts only when it is an integer in the signed or the unsigned 32-bit range, given as
a JSON integer, an integral JSON number (`2.0`) or a decimal string (`"2"`). Booleans, `null`,
NaN, infinities, fractions and anything else are *unknown*: they leave the exit code as it
was, and an unknown exit code is never reported as 0. Negative values (killed processes
report -1) are known and nonzero. ACP's `exitCode` is unsigned, and a Windows process that
crashed ends with a code such as 0xC0000005 (3221225477): a value above the signed range is
kept as the signed value with the same 32 bits (-1073741819), as Windows' own shells show it.
"""

from __future__ import annotations

import math
import re
from enum import IntEnum
from typing import Final

from shellexec.normalize.access import obj, obj_at

INT32_MIN: Final = -(2**31)
INT32_MAX: Final = 2**31 - 1
UINT32_MAX: Final = 2**32 - 1

_DECIMAL = re.compile(r"[+-]?[0-9]+")
# Longer decimal strings cannot be in range; checking first keeps int() away from huge input.
_MAX_DIGITS: Final = 10


class ExitRank(IntEnum):
    """How much an exit-code source is trusted; a higher rank is never overridden by a lower."""

    NONE = 0
    MARKUP = 1
    NATIVE = 2
    TERMINAL = 3
    HOST = 4
    """The `exitStatus` of an ACP terminal (v2 `terminal_update`, or the bridge's own
    terminal): the process's own status, above anything the agent says (ADR 0085)."""


def parse_exit_code(value: object) -> int | None:
    """The exit code `value` states, or None when it states none (see the module rules)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return _in_range(value)
    if isinstance(value, float):
        return _in_range(int(value)) if math.isfinite(value) and value.is_integer() else None
    if isinstance(value, str):
        return _parse_decimal(value.strip())
    return None


def _parse_decimal(text: str) -> int | None:
    if not _DECIMAL.fullmatch(text):
        return None
    sign = -1 if text.startswith("-") else 1
    digits = text.lstrip("+-").lstrip("0") or "0"
    return _in_range(sign * int(digits)) if len(digits) <= _MAX_DIGITS else None


def _in_range(code: int) -> int | None:
    """`code` as a signed 32-bit value; None outside both 32-bit ranges."""
    if INT32_MIN <= code <= INT32_MAX:
        return code
    return code - 2**32 if INT32_MAX < code <= UINT32_MAX else None


def terminal_exit(meta: object) -> int | None:
    """`_meta.terminal_exit.exit_code`: null when a signal killed the process (unknown)."""
    return parse_exit_code(obj_at(meta, "terminal_exit").get("exit_code"))


def native_exit(raw_output: object) -> int | None:
    """The first valid provider-native structured exit field of a `rawOutput` object."""
    raw = obj(raw_output)
    candidates = (
        raw.get("exit_code"),  # Codex (Rust and TypeScript)
        obj(raw.get("metadata")).get("exit"),  # OpenCode; null after a timeout or abort
        obj(raw.get("details")).get("exitCode"),  # OMP; sent only when nonzero
    )
    for candidate in candidates:
        code = parse_exit_code(candidate)
        if code is not None:
            return code
    return None
