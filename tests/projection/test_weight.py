"""What a message or an event weighs (ADR 0133): a fixed part and the memory of its texts, so a
page, a watcher's queue and a replay batch are bounded by bytes as well as by count."""

from __future__ import annotations

import sys
from collections.abc import Iterator

from shellexec.projection.weight import FIXED_WEIGHT, fitting, message_weight, view_weight

from support.views import shell_view


def test_fitting_keeps_the_leading_items_within_the_budget() -> None:
    assert fitting([4, 4, 4], 8) == 2
    assert fitting([4, 4, 4], 12) == 3
    assert fitting([4, 4, 4], 7) == 1
    assert fitting([], 8) == 0


def test_fitting_always_keeps_one_item_even_over_the_budget() -> None:
    # Else nothing past an item heavier than the budget could ever be read.
    assert fitting([100, 1], 8) == 1


def test_fitting_reads_no_further_than_it_keeps() -> None:
    read: list[int] = []

    def weights() -> Iterator[int]:
        for weight in (4, 4, 4, 4):
            read.append(weight)
            yield weight

    assert fitting(weights(), 8) == 2
    assert len(read) == 3  # the third is the first one past the budget


def test_a_message_weighs_its_fixed_part_and_its_text_bytes() -> None:
    assert message_weight(0) == FIXED_WEIGHT
    assert message_weight(5000) == FIXED_WEIGHT + 5000


def test_an_event_weighs_the_memory_its_texts_take() -> None:
    ascii_command = "x" * 100_000
    wide_command = "\U0001F600" * 100_000  # Python keeps 4 bytes for each of these
    assert view_weight(shell_view(ascii_command)) >= FIXED_WEIGHT + 3 * 100_000
    assert view_weight(shell_view(wide_command)) >= FIXED_WEIGHT + 3 * 400_000
    assert view_weight(shell_view(wide_command)) == FIXED_WEIGHT + 3 * sys.getsizeof(
        wide_command) + sys.getsizeof("/w")


def test_an_event_without_a_message_weighs_the_fixed_part() -> None:
    assert view_weight(None) == FIXED_WEIGHT
