"""Fixtures: one real server + Envoy stack shared by the run (tests use their own sessions),
and a fresh stack for tests that kill or restart the server."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from shellexec.client import ShellExecClient

from support.stack import Stack


@pytest.fixture(scope="session")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    running = Stack(tmp_path_factory.mktemp("stack")).start()
    yield running
    running.stop()


@pytest.fixture
def own_stack(tmp_path: Path) -> Iterator[Stack]:
    """A stack of the test's own, for tests that kill or restart the server."""
    running = Stack(tmp_path).start()
    yield running
    running.stop()


@pytest.fixture(scope="session")
def client(stack: Stack) -> Iterator[ShellExecClient]:
    with stack.client() as connected:
        yield connected


@pytest.fixture
def stack_with(tmp_path: Path) -> Iterator[Callable[..., Stack]]:
    """Starts a stack of the test's own with extra settings (`SHELLEXEC_*=value` keywords);
    every stack it started stops after the test."""
    started: list[Stack] = []

    def start(**settings: str) -> Stack:
        running = Stack(tmp_path / f"stack{len(started)}", extra_env=settings)
        running.workdir.mkdir()
        started.append(running.start())
        return running

    yield start
    for running in started:
        running.stop()
