"""Fixtures: one real server + Envoy stack shared by each test process (tests use their own
sessions; `make test` runs two worker processes, ADR 0132), a fresh stack for tests that kill
or restart the server, and a Debian Chromium for each module of browser tests, whatever its
folder (Playwright allows one sync driver at a time).

Every stack fixture of the service's own folders (app, feed, service, store) runs on both
engines: the embedded SQLite file and a PostgreSQL server each test process starts once
(`support.postgres`; each stack gets a database of its own). A test that reads the SQLite file
itself is marked `sqlite_only`; the bridge, client, OpenAPI and browser tests, which see the
engine only through the API the service tests cover on both, run on SQLite.
"""

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

from support.postgres import PostgresServer
from support.stack import Stack, running_stack

SQLITE, POSTGRESQL = "sqlite", "postgresql"
ENGINES = (SQLITE, POSTGRESQL)
# Markers of tests whose PostgreSQL variant is not collected.
_SQLITE_ONLY_MARKERS = ("sqlite_only", "browser")
# The folders whose tests are about the service and its storage: they run on both engines.
# The others (the bridge, the clients, the OpenAPI fuzzing) drive the service through its API
# to test themselves; the engine behind it is what these folders test, so a second run of
# theirs on PostgreSQL would only double `make test`'s time.
_BOTH_ENGINE_FOLDERS = ("app", "feed", "service", "store")
_TESTS = Path(__file__).parent


def _runs_on_both_engines(item: pytest.Item) -> bool:
    folder = item.path.relative_to(_TESTS).parts[0]
    return folder in _BOTH_ENGINE_FOLDERS and not any(
        item.get_closest_marker(name) for name in _SQLITE_ONLY_MARKERS)


# The fixtures that start a PostgreSQL server: the run's, and one a test stops and starts.
_POSTGRES_FIXTURES = frozenset({"postgres_server", "own_postgres"})


def pytest_itemcollected(item: pytest.Item) -> None:
    """Marks `postgresql` every test that starts PostgreSQL: the PostgreSQL variant of a test
    on both engines, and a test of PostgreSQL alone (it asks for a server; a test that
    starts one otherwise, such as `up --replicas`, is marked where it is written), so
    `-m "not postgresql"` leaves them all out on a machine without it. Marked here, as each
    is collected: `-m` deselects before `pytest_collection_modifyitems` below runs."""
    callspec = getattr(item, "callspec", None)
    on_postgres = callspec is not None and callspec.params.get("engine") == POSTGRESQL
    if on_postgres or not _POSTGRES_FIXTURES.isdisjoint(getattr(item, "fixturenames", ())):
        item.add_marker(pytest.mark.postgresql)


@pytest.hookimpl(trylast=True)  # after pytest has grouped the items by engine
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Drops the PostgreSQL variants of SQLite-only tests and of the folders that test
    something else than the service's storage, and runs the browser tests last:
    Playwright's synchronous API keeps an event loop running on the main thread while its
    browser is open, where later tests call asyncio.run."""
    kept, dropped = [], []
    for item in items:
        callspec = getattr(item, "callspec", None)
        on_postgres = callspec is not None and callspec.params.get("engine") == POSTGRESQL
        if on_postgres and not _runs_on_both_engines(item):
            dropped.append(item)
        else:
            kept.append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
    items[:] = sorted(kept, key=lambda item: item.get_closest_marker("browser") is not None)


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """The run's PostgreSQL server, started the first time a test needs it."""
    server = PostgresServer.create()
    try:
        yield server
    finally:
        server.remove()


@pytest.fixture(scope="session", params=ENGINES)
def engine(request: pytest.FixtureRequest) -> str:
    """The engine of the stacks a test starts (every stack test runs on both)."""
    return str(request.param)


@pytest.fixture(scope="session")
def new_database(engine: str, request: pytest.FixtureRequest) -> Callable[[], dict[str, str]]:
    """The settings that give a new stack a database of its own on the run's engine (none
    for SQLite: a stack's work directory holds its file)."""
    if engine == SQLITE:
        return dict
    server: PostgresServer = request.getfixturevalue("postgres_server")
    return lambda: {"SHELLEXEC_DATABASE_URL": server.new_database()}


@pytest.fixture(scope="session")
def stack(tmp_path_factory: pytest.TempPathFactory,
          new_database: Callable[[], dict[str, str]]) -> Iterator[Stack]:
    with running_stack(tmp_path_factory.mktemp("stack"), **new_database()) as running:
        yield running


@pytest.fixture(scope="module")
def secured(tmp_path_factory: pytest.TempPathFactory,
            new_database: Callable[[], dict[str, str]]) -> Iterator[Stack]:
    """A stack with authentication on, shared by the tests of one module (each makes the
    tokens it needs)."""
    with running_stack(tmp_path_factory.mktemp("secured"), SHELLEXEC_AUTH="on",
                       **new_database()) as running:
        yield running


@pytest.fixture
def own_stack(tmp_path: Path, new_database: Callable[[], dict[str, str]]) -> Iterator[Stack]:
    """A stack of the test's own, for tests that kill or restart the server."""
    with running_stack(tmp_path, **new_database()) as running:
        yield running


@pytest.fixture(scope="session")
def client(stack: Stack) -> Iterator[ShellExecClient]:
    with stack.client() as connected:
        yield connected


@pytest.fixture
def stack_with(tmp_path: Path,
               new_database: Callable[[], dict[str, str]]) -> Iterator[Callable[..., Stack]]:
    """Starts a stack of the test's own with extra settings (`SHELLEXEC_*=value` keywords);
    every stack it started stops after the test."""
    with contextlib.ExitStack() as started:
        count = itertools.count()

        def start(**settings: str) -> Stack:
            workdir = tmp_path / f"stack{next(count)}"
            workdir.mkdir()
            return started.enter_context(running_stack(workdir, **{**new_database(),
                                                                   **settings}))

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
