"""The page against a service with authentication on: a small sign-in form on the first 401,
the token kept for the browser tab only, and every request, the live feed included, sending
it (issue 11 "Authentication and authorization"); a token revoked while the page is open brings
the form back from whichever request is refused first."""

from __future__ import annotations

import subprocess
from collections.abc import Callable

import pytest
from playwright.sync_api import Browser, Response, expect
from web.browser import new_context
from web.chat import ChatPage, codex_delta, generic_start, user_text
from web.test_accessibility import audit

from support.acp import agent_text
from support.rest import unique
from support.stack import BIN, Stack

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


def _signed_in_without_read(secured: Stack, chat: ChatPage) -> str:
    """Opens a session's page signed in with an `ingest` token (the bridge's); returns a
    `read` token to sign in with next."""
    admin = secured.api_as(secured.create_token("admin", "admin"))
    ingest = secured.create_token("bridge", "ingest")
    reader = secured.create_token("reader", "read")
    sid = admin.new_session("codex")["id"]
    chat.page.goto(f"{secured.rest_url}/sessions/{sid}")
    sign_in(chat, ingest)
    return reader


def test_a_token_without_the_read_scope_asks_again_and_says_why(
        secured: Stack, chat: ChatPage) -> None:
    """A bridge's `ingest` token is valid, and answered 403 for reading: the form comes back
    and says the token lacks the read scope. The page used to show "Could not load the
    session" and keep the token, with no way to give another."""
    reader = _signed_in_without_read(secured, chat)
    rejected = chat.page.get_by_test_id("sign-in-rejected")
    expect(rejected).to_have_attribute("data-reason", "scope")
    expect(rejected).to_contain_text("lacks the read scope")
    expect(chat.page.get_by_test_id("sign-in-form")).to_be_visible()
    assert chat.page.evaluate("sessionStorage.length") == 0

    sign_in(chat, reader)
    expect(chat.page.get_by_test_id("message-list")).to_have_attribute("data-loaded", "true")
    expect(chat.page.get_by_test_id("sign-out")).to_be_visible()


@pytest.mark.parametrize(("pasted", "said"), [
    ("TOKEN\u2026", "U+2026"),  # a terminal's ellipsis: no header can carry it
    ("TOKEN with spaces", "U+0020"),
    ("shx_" + "a" * 253, "at most 256 characters"),
])
def test_a_token_no_header_can_carry_is_refused_before_it_is_kept(
        secured: Stack, chat: ChatPage, pasted: str, said: str) -> None:
    reader = secured.create_token("reader", "read")
    admin = secured.api_as(secured.create_token("admin", "admin"))
    sid = admin.new_session("codex")["id"]
    chat.page.goto(f"{secured.rest_url}/sessions/{sid}")
    expect(chat.page.get_by_test_id("sign-in-form")).to_be_visible()
    asked = len(chat.requests)
    sign_in(chat, pasted.replace("TOKEN", reader[:20]))
    expect(chat.page.get_by_test_id("sign-in-invalid")).to_contain_text(said)
    expect(chat.page.get_by_label("Token")).to_be_focused()
    assert chat.page.evaluate("sessionStorage.length") == 0
    assert [r.url for r in chat.requests[asked:] if "/api/" in r.url] == [], "nothing was sent"

    sign_in(chat, reader)  # the form still takes a good one
    expect(chat.page.get_by_test_id("message-list")).to_have_attribute("data-loaded", "true")


def test_a_kept_token_no_header_can_carry_is_asked_again(secured: Stack, chat: ChatPage) -> None:
    """A token kept by an older page (or pasted before tokens were checked) that fetch cannot
    send: every request threw a TypeError and the tab was stuck until it was closed."""
    admin = secured.api_as(secured.create_token("admin", "admin"))
    sid = admin.new_session("codex")["id"]
    url = f"{secured.rest_url}/sessions/{sid}"
    chat.page.goto(url)
    expect(chat.page.get_by_test_id("sign-in-form")).to_be_visible()  # it forgot any token
    chat.page.evaluate("sessionStorage.setItem('shellexec.token', 'shx_abc\\u2026')")
    chat.page.reload()
    rejected = chat.page.get_by_test_id("sign-in-rejected")
    expect(rejected).to_have_attribute("data-reason", "invalid")
    expect(rejected).to_contain_text("U+2026")
    assert chat.page.evaluate("sessionStorage.length") == 0


def test_sign_out_lets_a_token_limited_to_other_tasks_give_way(
        secured: Stack, chat: ChatPage) -> None:
    """A token limited to other tasks is answered 404 for this session, and for everything
    else it cannot see: no answer asks for another token. "Sign out" does, in the top bar
    whenever the tab holds a token, on the chat and on the index."""
    admin = secured.api_as(secured.create_token("admin", "admin"))
    sid = admin.new_session("codex", task_id=unique("app"))["id"]
    limited = secured.create_token("limited", "read", tasks="other-*")
    reader = secured.create_token("reader", "read")
    chat.page.goto(f"{secured.rest_url}/sessions/{sid}")
    sign_in(chat, limited)
    expect(chat.page.get_by_test_id("page-error")).to_contain_text("sign out")
    sign_out = chat.page.get_by_test_id("sign-out")
    expect(sign_out).to_be_visible()

    chat.page.goto(f"{secured.rest_url}/")  # the index is the tab's too
    expect(chat.page.get_by_test_id("session-index")).to_have_attribute("data-state", "ready")
    expect(sign_out).to_be_visible()
    sign_out.click()
    expect(chat.page.get_by_test_id("sign-in-form")).to_be_visible()
    expect(chat.page.get_by_test_id("sign-in-rejected")).to_have_count(0)
    expect(sign_out).to_be_hidden()
    assert chat.page.evaluate("sessionStorage.length") == 0

    sign_in(chat, reader)
    expect(chat.page.get_by_test_id("session-index-item")).to_have_count(1)


def test_the_sign_in_form_and_sign_out_have_no_serious_violations(
        secured: Stack, chat: ChatPage) -> None:
    reader = _signed_in_without_read(secured, chat)
    expect(chat.page.get_by_test_id("sign-in-rejected")).to_be_visible()
    sign_in(chat, "shx_\u2026")
    expect(chat.page.get_by_test_id("sign-in-invalid")).to_be_visible()
    assert audit(chat) == []

    sign_in(chat, reader)
    expect(chat.page.get_by_test_id("feed-status")).to_have_attribute("data-state", "live")
    expect(chat.page.get_by_test_id("sign-out")).to_be_visible()
    assert audit(chat) == []


# ---- a token revoked while the page is open ------------------------------------------------

@pytest.fixture
def quiet_feed(stack_with: Callable[..., Stack]) -> Stack:
    """Authentication on, and a feed that reads its log only when something is published: it
    checks the token at each read (docs/security.md), so a revoked token's open feed goes on
    here, and whatever the page shows after a revocation comes from its other requests."""
    return stack_with(SHELLEXEC_AUTH="on", SHELLEXEC_HEARTBEAT_SECONDS="3600",
                      SHELLEXEC_STREAM_LIFETIME_SECONDS="3600")


def revoke(stack: Stack, name: str) -> None:
    subprocess.run([BIN / "shellexec", "token", "revoke", name], env=stack.env, check=True,
                   capture_output=True)


def refused_urls(chat: ChatPage) -> list[str]:
    """Starts recording the API answers refused 401; the list fills as they come."""
    urls: list[str] = []

    def record(response: Response) -> None:
        if response.status == 401 and "/api/" in response.url:
            urls.append(response.url)

    chat.page.on("response", record)
    return urls


def expect_asked_again(chat: ChatPage) -> None:
    """The sign-in form, saying the token was refused, and the token forgotten."""
    expect(chat.page.get_by_test_id("sign-in-form")).to_be_visible()
    expect(chat.page.get_by_test_id("sign-in-rejected")).to_have_attribute("data-reason", "unknown")
    expect(chat.page.get_by_test_id("page-error")).to_have_count(0)
    expect(chat.page.get_by_test_id("sign-out")).to_be_hidden()
    assert chat.page.evaluate("sessionStorage.length") == 0


def test_a_page_of_older_messages_refused_asks_for_a_token_again(
        quiet_feed: Stack, chat: ChatPage) -> None:
    """Revoked while the chat is open, the token was refused for the page of older messages
    asked for on scrolling up: the chat was replaced with "Could not load the session: the
    bearer token is unknown or revoked", the token kept, until the feed was refused too."""
    admin = quiet_feed.api_as(quiet_feed.create_token("admin", "admin"))
    reader = quiet_feed.create_token("reader", "read")
    sid = admin.new_session("codex")["id"]
    for index in range(110):  # more than the newest page
        admin.publish(sid, generic_start(f"c{index}", f"echo {index}"))
    refused = refused_urls(chat)
    chat.page.goto(f"{quiet_feed.rest_url}/sessions/{sid}")
    sign_in(chat, reader)
    expect(chat.page.get_by_test_id("feed-status")).to_have_attribute("data-state", "live")
    expect(chat.page.get_by_test_id("message-list")).to_have_attribute("data-has-older", "true")

    refused.clear()  # the first load, before signing in, was refused too
    revoke(quiet_feed, "reader")
    for _ in range(50):
        if chat.page.get_by_test_id("sign-in-form").count():
            break
        chat.page.evaluate("window.scrollTo(0, 0)")
        chat.pump(100)
    expect_asked_again(chat)
    assert len(refused) == 1, refused
    assert "before=" in refused[0], refused  # the page of older messages, not the feed


def test_an_open_output_refused_asks_for_a_token_again_and_stops_polling(
        quiet_feed: Stack, chat: ChatPage) -> None:
    """Revoked while a running command's output is open: its poll was refused, and the output
    said "Output unavailable. Retrying…" and went on polling with the revoked token."""
    admin = quiet_feed.api_as(quiet_feed.create_token("admin", "admin"))
    reader = quiet_feed.create_token("reader", "read")
    sid = admin.new_session("codex")["id"]
    running = admin.play(sid, [generic_start("run", "tail -f build.log"),
                               codex_delta("run", "line\n")])
    refused = refused_urls(chat)
    chat.page.goto(f"{quiet_feed.rest_url}/sessions/{sid}")
    sign_in(chat, reader)
    expect(chat.page.get_by_test_id("feed-status")).to_have_attribute("data-state", "live")
    body = chat.expand(running)
    expect(body).to_contain_text("line")

    refused.clear()  # the first load, before signing in, was refused too
    revoke(quiet_feed, "reader")  # the next poll, a second after the last, is refused
    expect_asked_again(chat)
    assert len(refused) == 1, refused
    assert "/shell-output" in refused[0], refused
    polls = len(chat.shell_requests(running))
    chat.pump(2500)  # longer than the poller's delays after a failure (1 s, then 2 s)
    assert len(chat.shell_requests(running)) == polls, "the output went on polling"


def test_the_next_page_of_sessions_refused_asks_for_a_token_again(
        quiet_feed: Stack, chat: ChatPage) -> None:
    """Revoked while the index is open, "Show older sessions" said it could not load more,
    and the token stayed: every press failed so, with no form to give another."""
    admin = quiet_feed.api_as(quiet_feed.create_token("admin", "admin"))
    reader = quiet_feed.create_token("reader", "read")
    for _ in range(21):  # more than a page of the index
        admin.new_session("codex")
    refused = refused_urls(chat)
    chat.page.goto(f"{quiet_feed.rest_url}/")
    sign_in(chat, reader)
    expect(chat.page.get_by_test_id("session-index")).to_have_attribute("data-state", "ready")

    refused.clear()  # the first load, before signing in, was refused too
    revoke(quiet_feed, "reader")
    chat.press(chat.page.get_by_test_id("session-index-more"))
    expect_asked_again(chat)
    expect(chat.page.get_by_test_id("session-index-error")).to_have_count(0)
    assert len(refused) == 1, refused
    assert "before=" in refused[0], refused
