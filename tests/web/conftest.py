"""Browser fixtures: a fresh context per test on the run's one Chromium (tests/conftest.py),
at a desktop (1280x800) and a mobile (390x844, touch) viewport."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser
from web.browser import VIEWPORTS, new_context
from web.chat import ChatPage

from support.rest import Api
from support.stack import Stack


@pytest.fixture(params=list(VIEWPORTS))
def viewport(request: pytest.FixtureRequest) -> str:
    """Parametrizes a test over the desktop and the mobile viewport."""
    name: str = request.param
    return name


@pytest.fixture
def chat(browser: Browser, request: pytest.FixtureRequest) -> Iterator[ChatPage]:
    """A page in a fresh context, at the test's `viewport` when it takes one, else desktop."""
    viewport = "desktop"
    if "viewport" in request.fixturenames:
        viewport = request.getfixturevalue("viewport")
    context = new_context(browser, viewport)
    try:
        page = ChatPage(context.new_page(), request.node.name, touch=viewport == "mobile")
        yield page
        assert page.errors == [], "the page logged errors"
    finally:
        context.close()


@pytest.fixture
def api(stack: Stack) -> Api:
    return stack.api
