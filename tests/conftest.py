"""Fixtures: one real server + Envoy stack shared by the run (tests use their own sessions),
a fresh stack for tests that kill or restart the server, and a Debian Chromium for each
module of browser tests, whatever its folder (Playwright allows one sync driver at a time)."""

from __future__ import annotations

import contextlib
import itertools
import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, expect, sync_playwright
from web.browser import TIMEOUT_MS, launch

from shellexec.client import ShellExecClient

from support.stack import Stack, running_stack


@pytest.fixture(scope="session")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    with running_stack(tmp_path_factory.mktemp("stack")) as running:
        yield running


@pytest.fixture
def own_stack(tmp_path: Path) -> Iterator[Stack]:
    """A stack of the test's own, for tests that kill or restart the server."""
    with running_stack(tmp_path) as running:
        yield running


@pytest.fixture(scope="session")
def client(stack: Stack) -> Iterator[ShellExecClient]:
    with stack.client() as connected:
        yield connected


@pytest.fixture
def stack_with(tmp_path: Path) -> Iterator[Callable[..., Stack]]:
    """Starts a stack of the test's own with extra settings (`SHELLEXEC_*=value` keywords);
    every stack it started stops after the test."""
    with contextlib.ExitStack() as started:
        count = itertools.count()

        def start(**settings: str) -> Stack:
            workdir = tmp_path / f"stack{next(count)}"
            workdir.mkdir()
            return started.enter_context(running_stack(workdir, **settings))

        yield start


# Per module, not per run: while Playwright's sync driver is open, the main thread has a
# running event loop, and every later `asyncio.run` (the in-process store and feed tests)
# would fail. Modules that drive the browser start and stop it around themselves.
@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    os.environ.setdefault("PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD", "1")
    expect.set_options(timeout=TIMEOUT_MS)
    with sync_playwright() as playwright:
        try:
            launched = launch(playwright)
        except FileNotFoundError as error:
            pytest.fail(str(error))
        yield launched
        launched.close()
