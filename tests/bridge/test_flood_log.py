"""The log of what an agent can send without end: a line each for the first few, then a tally
at each power of ten, and neither read as a format."""

from __future__ import annotations

import logging

import pytest

from shellexec.bridge.flood_log import FloodLog


def test_the_first_few_each_get_a_line_then_only_powers_of_ten(
        caplog: pytest.LogCaptureFixture) -> None:
    flood = FloodLog("{count} so far, the latest {latest}", each=3)
    with caplog.at_level(logging.WARNING, logger="shellexec.bridge"):
        for number in range(1, 1_001):
            flood.note(f"event {number}", f"#{number}")

    assert caplog.messages == ["event 1", "event 2", "event 3; more are only counted",
                               "10 so far, the latest #10", "100 so far, the latest #100",
                               "1000 so far, the latest #1000"]
    assert flood.count == 1_000


def test_what_is_logged_is_never_read_as_a_format(caplog: pytest.LogCaptureFixture) -> None:
    flood = FloodLog("{count}: {latest}", each=1)
    with caplog.at_level(logging.WARNING, logger="shellexec.bridge"):
        for _ in range(10):
            flood.note("100% %s {count}", "%d {latest}")

    assert caplog.messages == ["100% %s {count}; more are only counted", "10: %d {latest}"]
