"""The session index at `/` in Chromium (issue 14 "Chat"): recent sessions newest first with
task, agent, state, start and their command and failure counts, each linking to its chat,
paged with "Show older sessions"; the id form stays below."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import expect
from web.chat import ChatPage

from support.acp import codex_end, codex_start
from support.stack import Stack, running_stack

pytestmark = [pytest.mark.browser, pytest.mark.slow]

PAGE = 20  # SESSION_PAGE_LIMIT in web/api.js


@pytest.fixture(scope="module")
def index_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    """A stack of its own holding only this module's sessions: PAGE + 4 of them, the newest
    running with a passed and a failed command. The list is the same for both viewports."""
    with running_stack(tmp_path_factory.mktemp("index")) as stack:
        api = stack.api
        ids = [api.create_session(f"task-{index:02}", "codex")["id"] for index in range(PAGE + 4)]
        api.start_turn(ids[-1])
        api.play(ids[-1], [codex_start("a", "make"), codex_end("a", "ok\n", 0)])
        api.play(ids[-1], [codex_start("b", "make test"), codex_end("b", "FAIL\n", 2)])
        yield stack


def test_the_index_lists_recent_sessions_with_their_counts_and_pages_back(
        index_stack: Stack, chat: ChatPage, viewport: str) -> None:
    api = index_stack.api
    listed = api.call("GET", "/api/v1/task-sessions?sort=desc&limit=100")["sessions"]
    ids = [session["id"] for session in listed]

    chat.page.goto(f"{index_stack.rest_url}/")
    index = chat.page.get_by_test_id("session-index")
    expect(index).to_have_attribute("data-state", "ready")
    items = chat.page.get_by_test_id("session-index-item")
    expect(items).to_have_count(PAGE)
    assert items.evaluate_all("els => els.map(el => el.dataset.sessionId)") == ids[:PAGE]
    newest = items.first
    expect(newest).to_have_attribute("data-state", "running")
    expect(newest).to_contain_text("task-23")
    expect(newest.get_by_test_id("session-index-agent")).to_have_text("codex")
    expect(newest.get_by_test_id("session-index-commands")).to_have_text("2 commands")
    expect(newest.get_by_test_id("session-index-failures")).to_have_text("1 failed")
    expect(chat.page.get_by_test_id("session-index-count")).to_have_text(f"{PAGE + 4} sessions")
    expect(chat.page.get_by_test_id("open-form")).to_be_visible()
    chat.assert_no_horizontal_overflow()
    chat.screenshot("session-index")

    chat.press(chat.page.get_by_test_id("session-index-more"))
    expect(items).to_have_count(PAGE + 4)
    expect(chat.page.get_by_test_id("session-index-more")).to_be_hidden()
    assert items.evaluate_all("els => els.map(el => el.dataset.sessionId)") == ids[:PAGE + 4]

    chat.press(newest.get_by_role("link"))
    expect(chat.page.get_by_test_id("session-header")).to_have_attribute("data-session-id", ids[0])
    expect(chat.page).to_have_url(f"{index_stack.rest_url}/sessions/{ids[0]}")


def test_an_empty_index_says_so(tmp_path: Path, chat: ChatPage) -> None:
    with running_stack(tmp_path) as stack:
        chat.page.goto(f"{stack.rest_url}/")
        expect(chat.page.get_by_test_id("session-index-empty")).to_have_text("No sessions yet.")
        expect(chat.page.get_by_test_id("session-index-more")).to_be_hidden()


def test_the_index_pages_back_by_keyboard_and_names_each_session_apart(
        tmp_path: Path, chat: ChatPage) -> None:
    # Pressing Enter on "Show older sessions" disabled the focused button while the page
    # loaded, so the focus fell to the page's start; and the links of one task's sessions all
    # had the task as their whole name.
    with running_stack(tmp_path) as stack:
        for _ in range(2 * PAGE + 1):
            stack.api.create_session("one-task", "codex")
        chat.page.goto(f"{stack.rest_url}/")
        items = chat.page.get_by_test_id("session-index-item")
        expect(items).to_have_count(PAGE)
        more = chat.page.get_by_test_id("session-index-more")
        more.focus()

        chat.page.keyboard.press("Enter")
        expect(items).to_have_count(2 * PAGE)
        expect(more).to_be_focused()  # another press loads the next page

        chat.page.keyboard.press("Enter")
        expect(items).to_have_count(2 * PAGE + 1)
        expect(more).to_be_hidden()
        # The last page hid the button: the focus is on the first session it brought.
        expect(items.nth(2 * PAGE).get_by_role("link")).to_be_focused()

        links = chat.page.locator("[data-testid=session-index-item] a")
        names = links.evaluate_all("els => els.map(el => el.textContent)")
        assert len(set(names)) == len(names) == 2 * PAGE + 1, names
        expect(links.first).to_have_accessible_name(re.compile(r"^one-task session started "))


def test_older_sessions_still_load_when_the_last_one_shown_was_deleted(
        tmp_path: Path, chat: ChatPage) -> None:
    """Each page goes on from the last session shown. Deleted meanwhile (another tab, a
    colleague, the retention sweep), it is unknown to the service, which answered every press
    of "Show older sessions" with 404 ("session (before) ... not found"), in place of the
    count, for good. The page goes on from the session before it, and drops the deleted one."""
    with running_stack(tmp_path) as stack:
        for index in range(2 * PAGE + 5):
            stack.api.create_session(f"task-{index:02}", "codex")
        chat.page.goto(f"{stack.rest_url}/")
        items = chat.page.get_by_test_id("session-index-item")
        expect(items).to_have_count(PAGE)
        shown = items.evaluate_all("els => els.map(el => el.dataset.sessionId)")
        for gone in shown[-2:]:  # the last two shown
            assert stack.api.request("DELETE", f"/api/v1/task-sessions/{gone}").status == 200

        more = chat.page.get_by_test_id("session-index-more")
        chat.press(more)
        listed = stack.api.call("GET", "/api/v1/task-sessions?sort=desc&limit=100")["sessions"]
        ids = [session["id"] for session in listed]
        expect(items).to_have_count(2 * PAGE - 2)
        shown_now = items.evaluate_all("els => els.map(el => el.dataset.sessionId)")
        assert shown_now == ids[:2 * PAGE - 2]
        count = chat.page.get_by_test_id("session-index-count")
        expect(count).to_have_text(f"{2 * PAGE + 3} sessions")
        expect(chat.page.get_by_test_id("session-index-error")).to_be_hidden()

        chat.press(more)  # and on to the end
        expect(items).to_have_count(2 * PAGE + 3)
        expect(more).to_be_hidden()
        assert items.evaluate_all("els => els.map(el => el.dataset.sessionId)") == ids


def test_the_index_says_it_could_not_load_the_list_of_sessions(
        tmp_path: Path, chat: ChatPage) -> None:
    with running_stack(tmp_path) as stack:
        stack.kill_server()  # the front door answers, the service does not
        chat.page.goto(f"{stack.rest_url}/")
        error = chat.page.get_by_test_id("page-error")
        expect(error).to_contain_text("Could not load the list of sessions")
        expect(error).not_to_contain_text("the session:")
