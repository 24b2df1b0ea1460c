"""The page against a service with authentication on: a small sign-in form on the first 401,
the token kept for the browser tab only, and every request, the live feed included, sending
it (issue 11 "Authentication and authorization")."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from playwright.sync_api import Browser, expect
from web.browser import new_context
from web.chat import ChatPage, generic_start, user_text

from support.acp import agent_text
from support.rest import unique
from support.stack import Stack

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture
def secured(stack_with: Callable[..., Stack]) -> Stack:
    return stack_with(SHELLEXEC_AUTH="on")


def sign_in(chat: ChatPage, token: str) -> None:
    form = chat.page.get_by_test_id("sign-in-form")
    expect(form).to_be_visible()
    form.get_by_label("Token").fill(token)
    form.get_by_role("button", name="Sign in").click()


def test_signing_in_loads_the_session_and_follows_its_feed(
        secured: Stack, chat: ChatPage, browser: Browser) -> None:
    admin = secured.api_as(secured.create_token("admin", "admin"))
    reader = secured.create_token("reader", "read")
    sid = admin.new_session("codex")["id"]
    admin.publish(sid, user_text("Why does CI fail?"))
    url = f"{secured.rest_url}/?session={sid}"

    chat.page.goto(url)
    expect(chat.page.get_by_test_id("sign-in-form")).to_be_visible()
    expect(chat.page.get_by_test_id("sign-in-rejected")).to_have_count(0)
    anonymous = len(chat.requests)
    sign_in(chat, reader)
    expect(chat.page.get_by_test_id("message-list")).to_have_attribute("data-loaded", "true")
    expect(chat.page.get_by_test_id("feed-status")).to_have_attribute("data-state", "live")

    # The feed carries the token too: a live event arrives.
    admin.publish(sid, agent_text("Running the tests."))
    message_id = admin.play(sid, [generic_start(unique("call"), "make test")])
    expect(chat.shell_row(message_id)).to_have_attribute("data-result", "running")
    signed_in = [r for r in chat.requests[anonymous:] if "/api/" in r.url]
    assert any("/messages:watch" in r.url for r in signed_in)
    assert {r.headers.get("authorization") for r in signed_in} == {f"Bearer {reader}"}

    # Kept for this tab only: in sessionStorage, not localStorage, and a reload needs no form.
    storage = chat.page.evaluate("[sessionStorage.length, localStorage.length]")
    assert storage == [1, 0]
    chat.page.reload()
    expect(chat.page.get_by_test_id("message-list")).to_have_attribute("data-loaded", "true")
    # Another tab (a fresh context shares no session storage) asks again.
    other = new_context(browser, "desktop")
    try:
        page = other.new_page()
        page.goto(url)
        expect(page.get_by_test_id("sign-in-form")).to_be_visible()
    finally:
        other.close()


def test_a_rejected_token_asks_again_and_says_why(secured: Stack, chat: ChatPage) -> None:
    admin = secured.api_as(secured.create_token("admin", "admin"))
    sid = admin.new_session("codex")["id"]
    chat.page.goto(f"{secured.rest_url}/?session={sid}")
    sign_in(chat, "shx_not-a-token")
    expect(chat.page.get_by_test_id("sign-in-rejected")).to_be_visible()
    expect(chat.page.get_by_test_id("sign-in-form")).to_be_visible()
    assert chat.page.evaluate("sessionStorage.length") == 0


def test_a_service_without_authentication_shows_no_form(stack: Stack, chat: ChatPage) -> None:
    sid = stack.api.new_session("codex")["id"]
    chat.open(f"{stack.rest_url}/?session={sid}")
    expect(chat.page.get_by_test_id("sign-in-form")).to_have_count(0)
