"""The caches of units of work: version-checked fold states, LRU bound, and forgetting them
all after a failure."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from shellexec import normalize
from shellexec.app.composition import compose
from shellexec.app.settings import Settings
from shellexec.service import NotFoundError, StateCache, units
from shellexec.service.known_sessions import SessionFacts
from shellexec.vocabulary import RESOURCE_SESSION


def _call() -> Any:
    return (object(), normalize.new_state())


def test_cache_hit_requires_the_rows_current_state_version() -> None:
    cache = StateCache()
    call = _call()
    cache.put(7, 3, call)
    assert cache.get(7, 3) is call
    assert cache.get(7, 4) is None


def test_cache_keeps_only_the_most_recently_used_entries() -> None:
    cache = StateCache(capacity=2)
    for position in (1, 2, 3):
        cache.put(position, 1, _call())
    assert cache.get(1, 1) is None
    assert cache.get(3, 1) is not None


def test_cache_holds_at_most_its_budget_of_output_bytes() -> None:
    cache = StateCache(capacity=100, max_bytes=600 * 1024)
    big = normalize.fold(normalize.new_state(), {
        "sessionUpdate": "tool_call", "toolCallId": "big", "kind": "execute",
        "rawInput": {"command": "cat big"}, "rawOutput": "z" * (250 * 1024)})
    for position in (1, 2, 3):
        cache.put(position, 1, (object(), big))  # type: ignore[arg-type]
    assert cache.get(1, 1) is None, "three 250 KiB bodies exceed 600 KiB"
    assert cache.get(2, 1) is not None
    assert cache.get(3, 1) is not None
    cache.put(4, 1, _call())  # a call without output costs little
    assert cache.get(2, 1) is not None


def test_cache_counts_a_call_s_long_command_title_and_directory_too() -> None:
    """Only bodies were counted: calls with three 256 KiB texts and no output held 900 MB in
    a cache of 32 MiB."""
    cache = StateCache(capacity=100, max_bytes=2 * 1024 * 1024)
    text = "t" * (256 * 1024)
    long = normalize.fold(normalize.new_state(), {
        "sessionUpdate": "tool_call", "toolCallId": "long", "kind": "execute",
        "title": text + "1", "rawInput": {"command": text + "2", "cwd": text + "3"}})
    for position in range(1, 5):
        cache.put(position, 1, (object(), long))  # type: ignore[arg-type]
    assert cache.get(1, 1) is None, "four calls of 768 KiB of texts exceed 2 MiB"
    assert cache.get(4, 1) is not None


def test_cache_counts_a_call_s_long_kind_and_tool_name_too() -> None:
    """A `kind` or a tool's name of megabytes was not counted (the row's record holds them
    again, so such a call was counted at about half)."""
    cache = StateCache(capacity=100, max_bytes=2 * 1024 * 1024)
    text = "k" * (384 * 1024)
    named = normalize.fold(normalize.new_state(), {
        "sessionUpdate": "tool_call", "toolCallId": "named", "kind": text,
        "_meta": {"claudeCode": {"toolName": text + "2"}}})
    for position in range(1, 4):
        cache.put(position, 1, (object(), named))  # type: ignore[arg-type]
    assert cache.get(1, 1) is None, "three calls of 768 KiB of texts exceed 2 MiB"
    assert cache.get(3, 1) is not None


def test_unexpected_failure_of_a_unit_of_work_clears_every_cache(tmp_path: Path) -> None:
    app = compose(Settings(database_url=f"sqlite:///{tmp_path / 'units.db'}"))
    database, caches = app.database, app.caches
    caches.states.put(1, 1, _call())
    caches.sessions.put(SessionFacts("ses_1", "task-1", "codex"))
    revision = asyncio.run(database.write(lambda: database.statements.next_revision("ses_1")))

    def failing() -> None:
        raise RuntimeError("disk full")

    with pytest.raises(RuntimeError):
        asyncio.run(units.write(database, failing))
    assert caches.states.get(1, 1) is None
    assert caches.sessions.get("ses_1") is None
    # The revision handed out was rolled back: the next one is read from the table again.
    assert asyncio.run(database.write(
        lambda: database.statements.next_revision("ses_1"))) == revision
    database.close()


def test_service_error_keeps_the_cache_because_nothing_was_written(tmp_path: Path) -> None:
    app = compose(Settings(database_url=f"sqlite:///{tmp_path / 'units.db'}"))
    database, caches = app.database, app.caches
    caches.states.put(1, 1, _call())

    def missing() -> None:
        raise NotFoundError("session", "ses_x", RESOURCE_SESSION)

    with pytest.raises(NotFoundError):
        asyncio.run(units.write(database, missing))
    database.close()
    assert caches.states.get(1, 1) is not None


def test_a_remembered_tool_call_is_found_without_its_version() -> None:
    cache = StateCache()
    call = _call()
    cache.remember("ses_1", "call_1", 7)
    cache.put(7, 3, call)
    assert cache.latest("ses_1", "call_1") is call
    assert cache.latest("ses_1", "call_2") is None
    cache.clear()
    assert cache.latest("ses_1", "call_1") is None
