"""Turn boundaries and long sessions in Chromium (issue 14 "Chat", "Long sessions"): each turn
ends with a quiet marker naming its stop reason and duration, a running turn says so and
updates live; a long session opens on its newest page, loads older ones on scrolling up
keeping the reader's place, keeps a bounded DOM, and live messages never move the reader; an
update to a message older than the pages loaded waits for its page, so no message is skipped."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect
from web.chat import ChatPage, generic_end, generic_start, user_text

from support.acp import agent_text, codex_start
from support.rest import Api
from support.stack import Stack

pytestmark = [pytest.mark.browser, pytest.mark.slow]

MAX_DOM_NODES = 5000


def test_turns_end_with_their_stop_reason_and_a_running_turn_says_so(
        stack: Stack, api: Api, chat: ChatPage, viewport: str) -> None:
    session = api.new_session("claude", task_id=f"turns-{viewport}")
    first = api.start_turn(session["id"])
    api.publish(session["id"], user_text("fix the parser"))
    api.publish(session["id"], agent_text("Done: the parser is fixed."))
    api.complete_turn(session["id"], first, "end_turn")
    second = api.start_turn(session["id"])
    api.publish(session["id"], user_text("and the tokenizer"))

    chat.open(f"{stack.rest_url}/?session={session['id']}")
    ended = chat.page.locator(f'[data-testid=turn-end][data-turn-id="{first}"]')
    expect(ended).to_have_attribute("data-state", "complete")
    expect(ended).to_have_attribute("data-stop-reason", "end_turn")
    expect(ended.get_by_test_id("turn-stop-reason")).to_have_text("end_turn")
    expect(ended.get_by_test_id("turn-duration")).to_have_text(re.compile(r"^\d+(\.\d)? s$"))
    running = chat.page.locator(f'[data-testid=turn-end][data-turn-id="{second}"]')
    expect(running).to_have_attribute("data-state", "running")
    expect(running).to_contain_text("running")
    # Each marker follows its turn's last message.
    order = chat.page.locator("[data-testid=message-list] > li").evaluate_all(
        "els => els.map(el => el.dataset.turnId ? 'end:' + el.dataset.turnId"
        " : (el.dataset.author || el.dataset.testid))")
    assert order == ["user", "agent", f"end:{first}", "user", f"end:{second}"]
    # The header names the agent and the task.
    expect(chat.page.get_by_test_id("session-agent")).to_have_text("claude")
    expect(chat.page.get_by_test_id("session-task")).to_have_text(f"turns-{viewport}")
    chat.screenshot("turn-running")

    api.complete_turn(session["id"], second, "cancelled")  # arrives over the feed
    expect(running).to_have_attribute("data-state", "complete")
    expect(running).to_have_attribute("data-stop-reason", "cancelled")
    chat.assert_no_horizontal_overflow()
    chat.screenshot("turn-ended")


def long_session(api: Api, commands: int) -> tuple[str, list[str]]:
    """A session of `commands` shell commands in one completed turn; (session id, message ids)."""
    session = api.new_session("codex")
    turn = api.start_turn(session["id"])
    ids = [api.play(session["id"], [codex_start(f"c{index}", f"echo step {index:04}")])
           for index in range(commands)]
    api.complete_turn(session["id"], turn)
    return session["id"], ids


def dom_nodes(chat: ChatPage) -> int:
    return int(chat.page.evaluate("document.getElementsByTagName('*').length"))


def first_visible(chat: ChatPage) -> tuple[str, float]:
    """The first row on screen and its top, in viewport pixels."""
    found = chat.page.evaluate("""() => {
      for (const el of document.querySelector('[data-testid=message-list]').children) {
        const top = el.getBoundingClientRect().top;
        const shown = el.getBoundingClientRect().bottom > 0;
        if (shown && el.dataset.messageId) return [el.dataset.messageId, top];
      }
      return null; }""")
    assert found is not None
    return str(found[0]), float(found[1])


def test_a_long_session_opens_on_its_newest_page_and_scrolls_back_keeping_its_place(
        stack: Stack, api: Api, chat: ChatPage) -> None:
    session_id, ids = long_session(api, 450)
    chat.open(f"{stack.rest_url}/sessions/{session_id}")
    rows = chat.page.get_by_test_id("shell-row")
    expect(chat.shell_row(ids[-1])).to_be_visible()
    assert rows.count() == 100  # the newest page only
    expect(chat.page.get_by_test_id("message-list")).to_have_attribute("data-has-older", "true")
    assert dom_nodes(chat) < MAX_DOM_NODES

    # Scroll up step by step; every load above the reader keeps the first visible row in place.
    for _ in range(200):
        if chat.shell_row(ids[0]).count() > 0:
            break
        chat.page.evaluate("window.scrollTo(0, 0)")
        anchor, top = first_visible(chat)
        chat.page.wait_for_function(
            "() => !document.querySelector('[data-testid=message-list]').dataset.loadingOlder")
        chat.pump(50)
        row = chat.shell_row(anchor)
        if row.count():
            moved = row.evaluate("el => el.getBoundingClientRect().top")
            assert abs(float(moved) - top) <= 2 or float(moved) < 0, (anchor, top, moved)
    expect(chat.shell_row(ids[0])).to_have_count(1)
    expect(chat.page.get_by_test_id("message-list")).to_have_attribute("data-has-older", "false")
    assert rows.count() <= 240  # the newest rows were unmounted on the way up
    assert dom_nodes(chat) < MAX_DOM_NODES
    chat.screenshot("scrolled-to-top")

    # A live message while the reader is at the top: appended below, the reader does not move.
    chat.page.evaluate("window.scrollTo(0, 0)")
    chat.pump(100)
    anchor, top = first_visible(chat)
    api.publish(session_id, agent_text("a live reply far below"))
    chat.pump(500)
    assert first_visible(chat) == (anchor, top)

    # Back down: the newest rows are mounted again and the live reply is there.
    for _ in range(100):
        chat.page.evaluate("window.scrollTo(0, document.documentElement.scrollHeight)")
        chat.pump(60)
        if chat.page.get_by_test_id("chat-message").count():
            break
    expect(chat.page.get_by_test_id("chat-text").last).to_have_text("a live reply far below")
    assert dom_nodes(chat) < MAX_DOM_NODES


def test_a_session_whose_older_messages_answer_404_is_shown_as_deleted(
        stack: Stack, api: Api, chat: ChatPage) -> None:
    session_id, _ = long_session(api, 110)  # more than the first page
    # Away from the feed, so no `session_deleted` event tells the page.
    chat.page.route("**/messages:watch*", lambda route: route.abort())
    chat.open(f"{stack.rest_url}/sessions/{session_id}", live=False)
    expect(chat.page.get_by_test_id("message-list")).to_have_attribute("data-has-older", "true")
    api.call("DELETE", f"/api/v1/task-sessions/{session_id}")

    for _ in range(50):  # scroll up until the page asks for the page before its oldest
        if chat.page.get_by_test_id("session-deleted").count():
            break
        chat.page.evaluate("window.scrollTo(0, 0)")
        chat.pump(100)
    expect(chat.page.get_by_test_id("session-deleted")).to_contain_text(
        f"Session {session_id} was deleted")
    expect(chat.page.get_by_test_id("feed-status")).to_have_attribute("data-state", "deleted")
    expect(chat.page.get_by_test_id("page-error")).to_have_count(0)
    watches = len(chat.feed_urls())
    chat.pump(6000)  # longer than the longest reconnect delay (5 s)
    assert len(chat.feed_urls()) == watches, "the feed went on after the session was gone"


def scroll_to_the_top(chat: ChatPage) -> None:
    """Scrolls up until the list says nothing older is held or on the server."""
    listed = chat.page.get_by_test_id("message-list")
    for _ in range(50):
        if listed.get_attribute("data-has-older") == "false":
            break
        chat.page.evaluate("window.scrollTo(0, 0)")
        chat.page.wait_for_function(
            "() => !document.querySelector('[data-testid=message-list]').dataset.loadingOlder")
        chat.pump(100)
    expect(listed).to_have_attribute("data-has-older", "false")


def test_an_update_to_a_message_older_than_the_pages_loaded_skips_no_message(
        stack: Stack, api: Api, chat: ChatPage) -> None:
    """A command started before the newest page ends while the page is open. Its update went in
    the list at the top and became the oldest message held, so the next page was asked for
    before it: the five commands between it and the newest page were never loaded, and the list
    said nothing older was left. It now waits for its page, and shows its end there."""
    session_id = api.new_session("codex")["id"]
    api.start_turn(session_id)
    old = api.play(session_id, [generic_start("old", "npm run dev")])
    for index in range(105):
        api.play(session_id, [generic_start(f"c{index}", f"echo {index}"),
                              generic_end(f"c{index}", "completed",
                                          {"formatted_output": f"{index}\n", "exit_code": 0})])
    chat.open(f"{stack.rest_url}/sessions/{session_id}")
    rows = chat.page.get_by_test_id("shell-row")
    assert rows.count() == 100  # the newest page: the running command is older than it

    api.publish(session_id, generic_end("old", "cancelled",
                                        {"formatted_output": "stopped\n", "exit_code": 130}))
    api.publish(session_id, agent_text("after the old command ended"))
    # The feed's events are handled in order: once the reply shows, the update was handled.
    expect(chat.page.get_by_test_id("chat-text").last).to_have_text("after the old command ended")
    expect(chat.shell_row(old)).to_have_count(0)  # not shown above the messages not loaded yet

    scroll_to_the_top(chat)
    commands = chat.page.get_by_test_id("shell-command").all_inner_texts()
    assert commands == ["npm run dev"] + [f"echo {index}" for index in range(105)]
    expect(chat.shell_row(old)).to_have_attribute("data-status", "cancelled")
    older_pages = [r.url for r in chat.requests if "/messages?" in r.url and "before=" in r.url]
    assert len(older_pages) == 1, older_pages  # one page brings the six commands left
