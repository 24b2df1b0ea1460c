"""The page follows the session's live feed, resumes after the server ends a stream, and opens
from each of its addresses (issue 4 "The page")."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pytest
from playwright.sync_api import expect
from web.chat import ChatPage, codex_delta, generic_start, user_text

from shellexec.rules.limits import MAX_WATCHERS_PER_CALLER

from support.acp import agent_text, codex_end
from support.rest import Api, unique
from support.stack import Stack

pytestmark = [pytest.mark.browser, pytest.mark.slow]

STREAM_LIFETIME_SECONDS = 2


@pytest.fixture
def short_stream_stack(tmp_path: Path) -> Iterator[Stack]:
    """A stack whose feed streams end after 2 s, so the page has to resume."""
    running = Stack(tmp_path, extra_env={
        "SHELLEXEC_STREAM_LIFETIME_SECONDS": str(STREAM_LIFETIME_SECONDS)}).start()
    yield running
    running.stop()


@pytest.fixture
def quiet_stack(stack_with: Callable[..., Stack]) -> Stack:
    """A stack whose periodic heartbeat (60 s) comes long after any expectation's timeout."""
    return stack_with(SHELLEXEC_HEARTBEAT_SECONDS="60")


def since_revision(url: str) -> int:
    return int(parse_qs(urlparse(url).query)["since_revision"][0])


def test_page_follows_the_live_feed(stack: Stack, api: Api, chat: ChatPage) -> None:
    session = api.new_session("codex")
    sid = session["id"]
    turn = api.start_turn(sid)
    api.publish(sid, user_text("Why does CI fail?"))

    chat.open(f"{stack.rest_url}/?session={sid}")
    messages = chat.page.locator("[data-testid=message-list] > li[data-message-id]")
    expect(messages).to_have_count(1)

    api.publish(sid, agent_text("Let me run the tests."))
    call = unique("call")
    message_id = api.play(sid, [generic_start(call, "make test")])
    row = chat.shell_row(message_id)
    expect(row).to_have_attribute("data-result", "running")
    expect(row).to_have_attribute("data-has-output", "false")
    expect(chat.toggle(message_id)).to_have_count(0)  # nothing retained yet: nothing to open
    api.publish(sid, codex_delta(call, "...\n"))
    expect(row).to_have_attribute("data-has-output", "true")
    expect(chat.toggle(message_id)).to_have_attribute("aria-expanded", "false")  # offered, shut
    api.publish(sid, codex_end(call, "...\nFAIL: test_tz\n", 2))
    expect(row).to_have_attribute("data-result", "failure")
    expect(row).to_have_attribute("data-exit-code", "2")
    api.publish(sid, agent_text("One test fails on a timezone assumption."))
    api.complete_turn(sid, turn)

    expect(messages).to_have_count(4)
    expect(messages.nth(0)).to_have_attribute("data-author", "user")
    expect(messages.nth(1)).to_contain_text("Let me run the tests.")
    expect(messages.nth(2)).to_have_attribute("data-message-id", message_id)
    expect(messages.nth(3)).to_contain_text("timezone assumption")
    assert chat.shell_requests() == []  # following the feed never fetches output


def test_a_reply_streamed_in_many_chunks_ends_drawn_whole_and_in_view(
        stack: Stack, api: Api, chat: ChatPage) -> None:
    """A streamed reply is drawn again at most once a frame (web/paced-draw.js, ADR 0124): the
    last chunk is still drawn, as Markdown, and the page keeps its bottom in view as the reply
    grows after the feed's events."""
    sid = api.new_session("claude")["id"]
    api.start_turn(sid)
    api.publish(sid, user_text("Explain the build."))
    chat.open(f"{stack.rest_url}/?session={sid}")
    chunks = [f"Step **{n}** of the build.\n\n" for n in range(1, 301)]
    for chunk in chunks:
        api.publish(sid, agent_text(chunk))
    reply = chat.page.locator("[data-testid=chat-message][data-author=agent]")
    expect(reply).to_have_count(1)
    expect(reply.get_by_test_id("chat-text").locator("p")).to_have_count(len(chunks))
    expect(reply.get_by_test_id("chat-text").locator("p").last).to_have_text(
        "Step 300 of the build.")
    expect(reply.get_by_test_id("chat-text").locator("strong")).to_have_count(len(chunks))
    at_bottom = ("() => window.innerHeight + window.scrollY"
                 " >= document.documentElement.scrollHeight - 2")
    chat.page.wait_for_function(at_bottom)
    assert chat.page.evaluate("document.documentElement.scrollHeight") > 4 * chat.page.evaluate(
        "window.innerHeight")  # the reply grew far past the first screen


# Counts what makes the browser lay the page out when read after a change (a forced layout),
# and the frames drawn meanwhile.
COUNT_LAYOUT_READS = """() => {
    // Layout reads, counted per animation frame: a page that measures around each chunk reads
    // more in a frame the more chunks that frame brings.
    const counts = window.__layoutReads = {reads: 0, frames: 0, inFrame: 0, mostInAFrame: 0};
    const read = () => {
        counts.reads += 1;
        counts.inFrame += 1;
        counts.mostInAFrame = Math.max(counts.mostInAFrame, counts.inFrame);
    };
    const rect = Element.prototype.getBoundingClientRect;
    Element.prototype.getBoundingClientRect = function () {
        read();
        return rect.call(this);
    };
    const height = Object.getOwnPropertyDescriptor(Element.prototype, 'scrollHeight');
    Object.defineProperty(Element.prototype, 'scrollHeight', {
        get() { read(); return height.get.call(this); }, configurable: true});
    const frame = () => {
        counts.frames += 1;
        counts.inFrame = 0;
        requestAnimationFrame(frame);
    };
    requestAnimationFrame(frame);
}"""


def test_a_long_reply_streamed_to_a_reader_at_the_bottom_reads_no_layout_per_chunk(
        stack: Stack, api: Api, chat: ChatPage) -> None:
    # 50 KB in 1,000 chunks: each chunk measured the page before and after it, and looked for
    # its first visible row: 22 s of forced layout, frames of up to 4.7 s.
    sid = api.new_session("claude")["id"]
    api.start_turn(sid)
    api.publish(sid, user_text("Explain the build."))
    chat.open(f"{stack.rest_url}/?session={sid}")
    chat.page.evaluate(COUNT_LAYOUT_READS)
    for n in range(1000):
        api.publish(sid, agent_text(f"Step **{n:03}** of the build, in a few words.\n\n"))
    paragraphs = chat.page.get_by_test_id("chat-text").last.locator("p")
    expect(paragraphs).to_have_count(1000, timeout=30_000)
    chat.page.wait_for_function("() => window.innerHeight + window.scrollY"
                                " >= document.documentElement.scrollHeight - 2")
    counts = chat.page.evaluate("window.__layoutReads")
    # A handful of measures a frame (going back to the bottom, the rows near the list's ends),
    # however many chunks the frame brings; measuring around each chunk read 213 in one frame.
    # How many frames the stream spans depends on the machine's speed (a total of reads once
    # failed on a slow CI run), so the bound is per frame.
    assert counts["mostInAFrame"] <= 6, counts


# Every state the feed status shows from now on (it is a live region: each is announced).
RECORD_FEED_STATES = """() => {
    const status = document.querySelector('[data-testid=feed-status]');
    window.__feedStates = [];
    new MutationObserver(() => window.__feedStates.push(status.dataset.state))
        .observe(status, {attributes: true, childList: true, characterData: true, subtree: true});
}"""


def test_page_resumes_after_the_stream_ends(
        short_stream_stack: Stack, chat: ChatPage) -> None:
    stack = short_stream_stack
    api = stack.api
    session = api.new_session("claude")
    sid = session["id"]
    api.start_turn(sid)
    api.publish(sid, user_text("hello"))

    chat.open(f"{stack.rest_url}/sessions/{sid}")
    chat.page.evaluate(RECORD_FEED_STATES)
    api.publish(sid, agent_text("first reply"))
    messages = chat.page.locator("[data-testid=message-list] > li[data-message-id]")
    expect(messages).to_have_count(2)

    # The server ends the stream after 2 s; the page reconnects from the last revision.
    for _ in range(100):
        if len(chat.feed_urls()) >= 2:
            break
        chat.pump(100)
    urls = chat.feed_urls()
    assert len(urls) >= 2, urls
    # The loaded state already held the turn's start and the user message.
    assert since_revision(urls[0]) == 2
    assert since_revision(urls[-1]) >= 3  # resumes after "first reply"
    end_events = [e for e, _ in chat.feed_events() if e.get("type") == "end_of_stream"]
    assert end_events, "the server did not end the stream"

    call = unique("call")
    message_id = api.play(sid, [generic_start(call, "git status"),
                                codex_end(call, "nothing to commit\n", 0)])
    expect(chat.shell_row(message_id)).to_have_attribute("data-result", "success")
    expect(messages).to_have_count(3)  # replays after the reconnect never duplicate a row
    expect(chat.page.get_by_test_id("feed-status")).to_have_attribute("data-state", "live")
    # A routine end is no loss: the status, a live region, never said "Reconnecting…".
    assert chat.page.evaluate("window.__feedStates") == []


def test_page_resumes_after_the_server_restarts(own_stack: Stack, chat: ChatPage) -> None:
    api = own_stack.api
    session = api.new_session("codex")
    sid = session["id"]
    api.start_turn(sid)
    chat.open(f"{own_stack.rest_url}/?session={sid}")
    api.publish(sid, agent_text("before the crash"))
    messages = chat.page.locator("[data-testid=message-list] > li[data-message-id]")
    expect(messages).to_have_count(1)

    own_stack.kill_server()
    feed_status = chat.page.get_by_test_id("feed-status")
    expect(feed_status).to_have_attribute("data-state", "reconnecting")
    own_stack.start_server()
    call = unique("call")
    message_id = api.play(sid, [generic_start(call, "make check"),
                                codex_end(call, "all checks passed\n", 0)])
    expect(chat.shell_row(message_id)).to_have_attribute("data-result", "success",
                                                          timeout=15_000)
    expect(feed_status).to_have_attribute("data-state", "live")
    expect(messages).to_have_count(2)
    assert since_revision(chat.feed_urls()[-1]) >= 1  # resumed after "before the crash"


def test_session_and_task_addresses_open_the_chat(stack: Stack, api: Api,
                                                  chat: ChatPage) -> None:
    task = unique("task")
    older = api.new_session("codex", task_id=task)
    api.publish(older["id"], user_text("older session"))
    latest = api.new_session("claude", task_id=task)
    api.publish(latest["id"], user_text("latest session"))

    chat.open(f"{stack.rest_url}/sessions/{older['id']}")
    header = chat.page.get_by_test_id("session-header")
    expect(header).to_have_attribute("data-session-id", older["id"])
    expect(chat.page.get_by_test_id("chat-text")).to_have_text("older session")

    chat.open(f"{stack.rest_url}/?session={latest['id']}")
    expect(header).to_have_attribute("data-session-id", latest["id"])
    expect(chat.page.get_by_test_id("session-agent")).to_have_text("claude")

    chat.open(f"{stack.rest_url}/?task={task}")  # the task's latest session, by boot state
    expect(header).to_have_attribute("data-session-id", latest["id"])
    expect(chat.page.get_by_test_id("chat-text")).to_have_text("latest session")
    assert any("/boot-state" in url for url, _ in chat.api_bodies())

    chat.page.goto(f"{stack.rest_url}/")
    expect(chat.page.get_by_test_id("open-form")).to_be_visible()
    chat.page.goto(f"{stack.rest_url}/sessions/ses_does_not_exist")
    expect(chat.page.get_by_test_id("page-error")).to_contain_text("Not found")


def test_a_dot_id_is_refused_without_asking_another_route(
        stack: Stack, api: Api, chat: ChatPage) -> None:
    # `.` and `..` are valid task ids, but a browser reads them in a path as steps (even as
    # `%2E`): `/?session=.` once fetched `/api/v1/task-sessions/messages`.
    api.new_session("codex", task_id="..")
    for address in ("/?task=..", "/?task=.", "/?session=.", "/?session=.."):
        chat.page.goto(f"{stack.rest_url}{address}")
        expect(chat.page.get_by_test_id("page-error")).to_contain_text(
            "cannot be put in an address")
    assert [r.url for r in chat.requests if "/api/" in r.url] == []


def test_page_shows_live_at_once_on_a_quiet_session(quiet_stack: Stack, chat: ChatPage) -> None:
    api = quiet_stack.api
    sid = api.new_session("codex")["id"]
    api.publish(sid, agent_text("nothing happens after this"))
    # `open` waits (10 s at most) for the feed badge to say "live": only the stream's opening
    # heartbeat can bring it, since nothing is published and the periodic one is 60 s away.
    chat.open(f"{quiet_stack.rest_url}/?session={sid}")
    assert [e.get("type") for e, _ in chat.feed_events()] == ["heartbeat"]


def test_header_of_a_session_created_without_an_agent_names_no_agent(
        stack: Stack, api: Api, chat: ChatPage) -> None:
    task = unique("task")
    session = api.new_session(agent=None, task_id=task)  # as the README's `{"task_id": ...}`
    header = chat.page.get_by_test_id("session-header")
    for address in (f"/sessions/{session['id']}", f"/?task={task}"):
        chat.open(f"{stack.rest_url}{address}")
        expect(header).to_have_attribute("data-session-id", session["id"])
        expect(header).to_contain_text(task)
        expect(header).not_to_contain_text("null")
        expect(chat.page.get_by_test_id("session-agent")).to_have_count(0)
        assert header.inner_text().split() == ["Session", session["id"], "task", task]


def test_page_shows_a_deleted_session_instead_of_reconnecting(
        stack: Stack, api: Api, chat: ChatPage) -> None:
    sid = api.new_session("codex")["id"]
    api.publish(sid, agent_text("about to be deleted"))
    chat.open(f"{stack.rest_url}/sessions/{sid}")
    expect(chat.page.locator("[data-testid=message-list] > li")).to_have_count(1)
    watches = len(chat.feed_urls())

    api.call("DELETE", f"/api/v1/task-sessions/{sid}")

    notice = chat.page.get_by_test_id("session-deleted")
    expect(notice).to_contain_text(f"Session {sid} was deleted")
    expect(chat.page.get_by_test_id("feed-status")).to_have_attribute("data-state", "deleted")
    expect(chat.page.get_by_test_id("message-list")).to_have_count(0)
    chat.pump(1500)  # longer than the first reconnect delay (500 ms)
    assert len(chat.feed_urls()) == watches, "the page did not reconnect to a deleted session"


def test_a_session_deleted_while_the_page_was_away_is_shown_as_deleted(
        stack: Stack, api: Api, chat: ChatPage) -> None:
    sid = api.new_session("codex")["id"]
    api.publish(sid, agent_text("deleted while the page was away"))
    # The page cannot reach the feed (a laptop asleep, a server restarting), so it never
    # receives the `session_deleted` event; when it comes back, the feed answers 404.
    chat.page.route("**/messages:watch*", lambda route: route.abort())
    chat.open(f"{stack.rest_url}/sessions/{sid}", live=False)
    expect(chat.page.get_by_test_id("feed-status")).to_have_attribute("data-state", "reconnecting")
    api.call("DELETE", f"/api/v1/task-sessions/{sid}")
    chat.page.unroute("**/messages:watch*")

    expect(chat.page.get_by_test_id("session-deleted")).to_contain_text(
        f"Session {sid} was deleted", timeout=15_000)
    expect(chat.page.get_by_test_id("feed-status")).to_have_attribute("data-state", "deleted")
    watches = len(chat.feed_urls())
    chat.pump(6000)  # longer than the longest reconnect delay (5 s)
    assert len(chat.feed_urls()) == watches, "the page kept asking for a deleted session"


def test_page_reloads_when_the_feed_it_resumes_was_compacted(
        short_stream_stack: Stack, chat: ChatPage) -> None:
    stack = short_stream_stack
    api = stack.api
    sid = api.new_session("codex")["id"]
    api.publish(sid, agent_text("seen live"))
    chat.open(f"{stack.rest_url}/sessions/{sid}")
    messages = chat.page.locator("[data-testid=message-list] > li[data-message-id]")
    expect(messages).to_have_count(1)

    # Keep the page away from the feed (its stream ends after 2 s) while the session moves on
    # and its events are compacted away.
    chat.page.route("**/messages:watch*", lambda route: route.abort())
    expect(chat.page.get_by_test_id("feed-status")).to_have_attribute(
        "data-state", "reconnecting", timeout=10_000)
    api.publish(sid, user_text("missed while away"))
    with sqlite3.connect(stack.workdir / "shellexec.db") as db:
        db.execute("UPDATE session SET compacted_revision = revision WHERE id = ?", (sid,))
        db.execute("DELETE FROM event WHERE session_number = "
                   "(SELECT number FROM session WHERE id = ?)", (sid,))
    db.close()
    chat.page.unroute("**/messages:watch*")

    # The resumed feed answers `reset`; the page loads the session again and shows what it
    # missed, then follows the feed from the fresh revision.
    expect(messages).to_have_count(2, timeout=15_000)
    expect(messages.nth(1)).to_contain_text("missed while away")
    expect(chat.page.get_by_test_id("feed-status")).to_have_attribute("data-state", "live")
    api.publish(sid, agent_text("after the reload"))
    expect(messages).to_have_count(3)


def test_a_feed_refused_as_revision_ahead_loads_the_session_again_and_follows_it(
        own_stack: Stack, chat: ChatPage) -> None:
    """The page's revision is beyond the session's: its database was restored from a backup
    while the page was open. The feed answers 400 REVISION_AHEAD, and docs/api.md says to load
    the session again and watch from its revision: the page does so once, as after `reset`. It
    used to ask again from the same revision every 5 s, for ever, showing "Reconnecting…"."""
    api = own_stack.api
    sid = api.new_session("codex")["id"]
    api.start_turn(sid)
    api.publish(sid, user_text("before the backup"))
    database = own_stack.workdir / "shellexec.db"
    backup = own_stack.workdir / "backup.db"
    with sqlite3.connect(database) as source, sqlite3.connect(backup) as copy:
        source.backup(copy)
    source.close()
    copy.close()
    for index in range(3):
        api.publish(sid, agent_text(f"lost with the restore {index}"))
    loads: list[str] = []
    chat.page.on("load", lambda page: loads.append(page.url))
    chat.open(f"{own_stack.rest_url}/sessions/{sid}")
    messages = chat.page.locator("[data-testid=message-list] > li[data-message-id]")
    expect(messages).to_have_count(2)

    own_stack.kill_server()
    for suffix in ("", "-wal", "-shm"):
        database.with_name(database.name + suffix).unlink(missing_ok=True)
    backup.rename(database)
    own_stack.start_server()
    restored = int(api.session(sid)["revision"])
    message_id = api.play(sid, [generic_start(unique("call"), "make check")])

    expect(chat.shell_row(message_id)).to_be_visible(timeout=15_000)
    expect(messages).to_have_count(2)  # "before the backup", and the command
    expect(chat.page.get_by_test_id("feed-status")).to_have_attribute("data-state", "live")
    assert len(loads) == 2, loads  # loaded once more, not in a loop
    # The reloaded page watches from the restored session's revision, not beyond it.
    assert restored <= since_revision(chat.feed_urls()[0]) <= int(api.session(sid)["revision"])


def test_a_feed_refused_as_one_too_many_says_so_then_follows_once_one_ends(
        stack: Stack, api: Api, chat: ChatPage) -> None:
    # Authentication is off here, so this test and the page are one caller (ADR 0135).
    sid = api.new_session("codex")["id"]
    held = [api.watch(sid, "?since_revision=0") for _ in range(MAX_WATCHERS_PER_CALLER)]
    try:
        for feed in held:
            assert next(feed)["type"] == "heartbeat"  # open on the server
        chat.open(f"{stack.rest_url}/?session={sid}", live=False)
        status = chat.page.get_by_test_id("feed-status")
        expect(status).to_have_attribute("data-state", "busy")
        expect(status).to_have_text("Too many feeds open")

        held.pop().close()  # one of the caller's feeds ends: the page's next try gets its place
        expect(status).to_have_attribute("data-state", "live", timeout=30_000)
        api.publish(sid, agent_text("Following now."))
        expect(chat.page.locator("[data-testid=message-list] > li[data-message-id]")
               ).to_contain_text("Following now.")
    finally:
        for feed in held:
            feed.close()


# Headless Chromium never hides a page: this makes `document.visibilityState` the test's to set.
VISIBILITY = """(() => {
    let state = 'visible';
    const define = (name, get) => Object.defineProperty(Document.prototype, name,
                                                        {get, configurable: true});
    define('visibilityState', () => state);
    define('hidden', () => state === 'hidden');
    window.__show = (next) => {
        state = next;
        document.dispatchEvent(new Event('visibilitychange'));
    };
})()"""
TABS_PER_HOST = 6  # what Chromium opens to one host over HTTP/1.1


def test_hidden_tabs_let_go_of_their_feeds_so_a_seventh_tab_opens(
        stack: Stack, api: Api, chat: ChatPage) -> None:
    # Each tab held its feed's connection: with six open, a seventh tab waited for a free one.
    context = chat.page.context
    context.add_init_script(script=VISIBILITY)
    sessions = [api.new_session("codex")["id"] for _ in range(TABS_PER_HOST + 1)]
    for sid in sessions:
        api.publish(sid, agent_text("first"))
    tabs: list[ChatPage] = []
    for sid in sessions[:TABS_PER_HOST]:
        tab = ChatPage(context.new_page(), f"{chat.name}-{len(tabs)}")
        tab.open(f"{stack.rest_url}/sessions/{sid}")
        tabs.append(tab)
    for tab in tabs:
        tab.page.evaluate("window.__show('hidden')")
    for tab in tabs:  # after the grace period (5 s)
        expect(tab.page.get_by_test_id("feed-status")).to_have_attribute(
            "data-state", "paused", timeout=15_000)

    seventh = ChatPage(context.new_page(), f"{chat.name}-seventh")
    seventh.open(f"{stack.rest_url}/sessions/{sessions[-1]}")  # live: it got a connection

    # Shown again, a tab follows from its revision: what it missed, once, then live events.
    api.publish(sessions[0], user_text("missed while hidden"))
    first = tabs[0]
    watches = len(first.feed_urls())
    first.page.evaluate("window.__show('visible')")
    expect(first.page.get_by_test_id("feed-status")).to_have_attribute("data-state", "live")
    messages = first.page.locator("[data-testid=message-list] > li[data-message-id]")
    expect(messages).to_have_count(2)
    expect(messages.nth(1)).to_contain_text("missed while hidden")
    resumed = first.feed_urls()[watches:]
    assert len(resumed) == 1, resumed
    assert since_revision(resumed[0]) > 0, resumed
    api.publish(sessions[0], agent_text("live again"))
    expect(messages).to_have_count(3)
    for tab in [*tabs, seventh]:
        assert tab.errors == [], tab.errors
