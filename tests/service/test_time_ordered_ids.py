"""Ids sort in the order they were made, and stay unguessable (ADR 0113)."""

from __future__ import annotations

import itertools
import re

from shellexec.service import time_ordered_id


def test_ids_made_later_sort_later() -> None:
    # One id per millisecond from a clock passed in, across a carry of the hex digits.
    milliseconds = itertools.count(0x00FF_FFFF_FFE0)
    ids = [time_ordered_id("msg", lambda: next(milliseconds) * 1_000_000) for _ in range(64)]
    assert ids == sorted(ids)
    assert len(set(ids)) == len(ids)


def test_ids_of_one_millisecond_differ_in_their_random_part() -> None:
    ids = {time_ordered_id("msg", lambda: 1_700_000_000_000_000_000) for _ in range(1000)}
    assert len(ids) == 1000
    assert {value[:16] for value in ids} == {"msg_018bcfe56800"}


def test_ids_have_the_form_the_server_checks() -> None:
    for prefix in ("ses", "turn", "msg"):
        value = time_ordered_id(prefix)
        assert re.fullmatch(f"{prefix}_[0-9a-f]{{32}}", value)  # as `api.validation` checks
