"""Warnings about what a hostile agent can send without end, in a log it cannot fill.

An agent can send the same refused thing in a loop (a malformed frame, a notification the
bridge does not serve). Each of the first few gets its own warning; after that only a tally at
each power of ten of their count, so a flood of N costs about `each + log10(N)` lines
(ADR 0129).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

log = logging.getLogger("shellexec.bridge")


@dataclass(slots=True)
class FloodLog:
    """Warns of each of the first `each` events it is told of, then only when their count
    reaches a power of ten, with `tally` (a format of `count` and `latest`)."""

    tally: str
    each: int = 10
    count: int = 0

    def note(self, warning: str, latest: str) -> None:
        """One more event: `warning` while they are few, else perhaps the tally naming
        `latest`. Both are logged as they are, never as a format of their own."""
        self.count += 1
        if self.count <= self.each:
            log.warning("%s%s", warning, "; more are only counted" if self.count == self.each
                        else "")
        elif _power_of_ten(self.count):
            log.warning("%s", self.tally.format(count=self.count, latest=latest))


def _power_of_ten(number: int) -> bool:
    digits = str(number)
    return digits[0] == "1" and digits.count("0") == len(digits) - 1
