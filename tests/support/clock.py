"""A clock a test moves by hand (microseconds since the epoch, like `service.Clock`)."""

from __future__ import annotations


class SettableClock:
    """Answers `now` until the test changes it."""

    def __init__(self, now: int) -> None:
        self.now = now

    def __call__(self) -> int:
        return self.now
