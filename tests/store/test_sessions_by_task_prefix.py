"""ListSessions narrows its scan in the store to task ids starting with a pattern's literal
prefix (`Caller.task_prefixes`), compared as plain text on both engines: `_` and `%` are
characters there, not SQL wildcards."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path

import pytest

from shellexec.app.composition import compose
from shellexec.app.settings import Settings
from shellexec.service.access import UNRESTRICTED, Caller
from shellexec.store import queries

TASKS = ("repo_a", "other", "repoXa", "repo_b", "rep")


async def _tasks_read(database_url: str, prefix_sets: list[tuple[str, ...] | None]
                     ) -> list[list[str]]:
    """Creates a session per task of TASKS, then reads the sessions for each set of prefixes."""
    app = compose(Settings(database_url=database_url))
    try:
        for task_id in TASKS:
            await app.sessions.create(task_id, "codex")
        found = []
        for prefixes in prefix_sets:
            rows = await app.database.read(partial(
                queries.sessions_by_creation, 10, descending=False, task_prefixes=prefixes))
            found.append([str(row.task_id) for row in rows])
        return found
    finally:
        app.close()


def test_only_sessions_of_matching_task_ids_are_read(
        tmp_path: Path, new_database: Callable[[], dict[str, str]]) -> None:
    url = new_database().get("SHELLEXEC_DATABASE_URL", f"sqlite:///{tmp_path / 'prefix.db'}")
    assert asyncio.run(_tasks_read(url, [None, ("repo_",), ("repo_", "oth"), ("nothing",)])) == [
        list(TASKS), ["repo_a", "repo_b"], ["repo_a", "other", "repo_b"], []]


def test_prefixes_of_every_length_at_once_are_one_shallow_condition(
        tmp_path: Path, new_database: Callable[[], dict[str, str]]) -> None:
    # 1,000 prefixes of 128 lengths: a chain of one comparison each nests too deep for
    # SQLite's parser and peewee's recursion; the matches are still exactly the right ones.
    url = new_database().get("SHELLEXEC_DATABASE_URL", f"sqlite:///{tmp_path / 'many.db'}")
    many = tuple(("z" * 127 + str(index))[:length]
                 for index, length in zip(range(1000), [*range(2, 129)] * 8, strict=False))
    assert asyncio.run(_tasks_read(url, [(*many, "rep"), (*many, "repo_a", "other")])) == [
        ["repo_a", "repoXa", "repo_b", "rep"], ["repo_a", "other"]]


def test_a_caller_s_prefixes_are_its_patterns_literal_starts() -> None:
    def prefixes(*patterns: str) -> tuple[str, ...] | None:
        return Caller("t", frozenset(), patterns).task_prefixes()

    assert prefixes("repo_*") == ("repo_",)
    assert prefixes("a?c", "r[ab]*", "exact") == ("a", "r", "exact")
    assert prefixes("repo_*", "*-prod") is None  # one pattern narrows nothing: no prefilter
    # A prefix that starts with another one adds nothing to the scan; neither does a repeat.
    assert prefixes("repo-a*", "repo-*", "repo-b", "x*", "x?") == ("x", "repo-")
    assert UNRESTRICTED.task_prefixes() is None



async def _listed_totals(database_url: str, callers: list[Caller]) -> list[int]:
    """The list's `total` for each caller, over a session per task of TASKS."""
    app = compose(Settings(database_url=database_url))
    try:
        for task_id in TASKS:
            await app.sessions.create(task_id, "codex")
        return [(await app.sessions.list_sessions(10, "", "", False, caller=caller)).total
                for caller in callers]
    finally:
        app.close()


def test_the_total_counts_only_the_tasks_a_caller_s_prefixes_narrow_to(
        tmp_path: Path, new_database: Callable[[], dict[str, str]],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The total grouped every session by task and matched each task in Python, for every
    caller: one token's 40,000 tasks made every list cost 0.2-0.5 s (an attacker's probe)."""
    url = new_database().get("SHELLEXEC_DATABASE_URL", f"sqlite:///{tmp_path / 'total.db'}")
    counted: list[list[str]] = []  # the tasks each total counted one by one
    grouped = queries.sessions_per_task

    def spied(task_prefixes: Sequence[str] | None = None) -> list[tuple[str, int]]:
        rows = grouped(task_prefixes)
        counted.append([task_id for task_id, _ in rows])
        return rows

    monkeypatch.setattr(queries, "sessions_per_task", spied)
    narrow = Caller("narrow", frozenset({"read"}), ("repo_*",))
    assert asyncio.run(_listed_totals(url, [UNRESTRICTED, narrow])) == [len(TASKS), 2]
    assert [sorted(tasks) for tasks in counted] == [["repo_a", "repo_b"]]  # none for all
