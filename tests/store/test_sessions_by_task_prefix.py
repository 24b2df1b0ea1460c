"""ListSessions narrows its scan in the store to task ids starting with a pattern's literal
prefix (`Caller.task_prefixes`), compared as plain text on both engines: `_` and `%` are
characters there, not SQL wildcards."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from functools import partial
from pathlib import Path

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
