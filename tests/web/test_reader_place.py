"""What the reader reads stays where it is in Chromium (docs/web.md "Loading and following a
session"): an open output above them that grows, is drawn again or gets its exit line, and
live messages arriving while they read the top of a long session, never move the row they
read; an output opened on the last row comes into view.

Every wait is for a condition: the page's state, then two animation frames, after which the
browser has laid the change out and the page has answered it (a ResizeObserver runs before
the frame is painted). The place is read once two frames in a row show it the same, as the
reader sees it. The reader scrolls with the mouse wheel, as a reader does."""

from __future__ import annotations

import pytest
from playwright.sync_api import Locator, expect
from web.chat import ChatPage, codex_delta, user_text
from web.test_turns_and_history import long_session

from support.acp import codex_end, codex_start
from support.rest import Api, unique
from support.stack import Stack

pytestmark = [pytest.mark.browser, pytest.mark.slow]

# Beside the chat column (desktop), so the wheel scrolls the page, never an output region.
MARGIN_X = 40

TWO_FRAMES = "() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))"
# Waits until two frames leave the page's scroll position unchanged (a wheel's scroll has
# landed), for at most 200 frames.
STILL = """async () => {
  const frame = () => new Promise(r => requestAnimationFrame(r));
  for (let last = NaN, n = 0; n < 100; n += 1) { await frame(); await frame();
    if (window.scrollY === last) return; last = window.scrollY; } }"""


# The first row on screen and its top, read at the start of each frame until two readings in a
# row agree (for at most 100 frames). The page changes rows in tasks between frames (an answer
# of the output's poller, a feed message), and keeps its reader's place in the next frame,
# once the browser has laid the change out and before it paints it: a reading taken between
# the two saw a place the reader never sees.
STILL_PLACE = """async () => {
  const frame = () => new Promise(r => requestAnimationFrame(r));
  const read = () => {
    for (const el of document.querySelector('[data-testid=message-list]').children) {
      if (el.getBoundingClientRect().bottom > 0 && el.dataset.messageId)
        return [el.dataset.messageId, el.getBoundingClientRect().top];
    }
    return null; };
  let last = null;
  for (let n = 0; n < 100; n += 1) {
    await frame();
    const now = read();
    if (now && last && now[0] === last[0] && now[1] === last[1]) return now;
    last = now;
  }
  return last; }"""


def first_visible(chat: ChatPage) -> tuple[str, float]:
    """The first row on screen and its top, in viewport pixels, as the reader sees it."""
    found = chat.page.evaluate(STILL_PLACE)
    assert found is not None
    return str(found[0]), float(found[1])


def assert_in_place(chat: ChatPage, place: tuple[str, float]) -> None:
    """The row read first is still the first on screen, where it was (to within the rounding
    of the page's scrolling to whole pixels)."""
    anchor, top = first_visible(chat)
    assert anchor == place[0]
    assert abs(top - place[1]) < 1, (place, top)


def settled(chat: ChatPage) -> None:
    """Two frames: the change is laid out, and the page has kept its reader's place."""
    chat.page.evaluate(TWO_FRAMES)


def wheel_until(chat: ChatPage, delta: float, done: str) -> None:
    """Scrolls the page with the wheel, `delta` at a time, until `done` (a JS predicate) holds
    once the scrolling has stopped."""
    chat.page.mouse.move(MARGIN_X, 300)
    for _ in range(200):
        chat.page.evaluate(STILL)
        if chat.page.evaluate(done):
            return
        chat.page.mouse.wheel(0, delta)
    raise AssertionError(f"the wheel never reached {done}")


def top_of(locator: Locator) -> float:
    return float(locator.evaluate("el => el.getBoundingClientRect().top"))


def bottom_of(locator: Locator) -> float:
    return float(locator.evaluate("el => el.getBoundingClientRect().bottom"))


def watched_build(api: Api) -> tuple[str, str, str]:
    """A running command followed by 40 finished ones: (session, its call, its message)."""
    sid = api.new_session("codex")["id"]
    api.start_turn(sid)
    api.publish(sid, user_text("build it"))
    call = unique("run")
    message_id = api.play(sid, [codex_start(call, "npm run build -- --watch"),
                                codex_delta(call, "starting\n")])
    for index in range(40):
        api.play(sid, [codex_start(f"{call}-{index}", f"echo row-{index:02}"),
                       codex_end(f"{call}-{index}", "ok\n", 0)])
    return sid, call, message_id


def open_watched_build(stack: Stack, api: Api, chat: ChatPage) -> tuple[str, str, str, Locator]:
    """`watched_build`, opened in the page with the running command's output shown: (session,
    its call, its message, the output's stdout)."""
    sid, call, message_id = watched_build(api)
    chat.open(f"{stack.rest_url}/sessions/{sid}")
    stdout = chat.expand(message_id).get_by_test_id("shell-output-stdout")
    expect(stdout).to_contain_text("starting")
    return sid, call, message_id, stdout


def read_below(chat: ChatPage, row: Locator, by: float = 0) -> None:
    """The reader, who opened `row`'s output, scrolls down until `row` is more than `by` px
    above the screen, and reads what follows it."""
    selector = f'[data-message-id="{row.get_attribute("data-message-id")}"]'
    wheel_until(chat, 100, f"() => document.querySelector('{selector}')"
                           f".getBoundingClientRect().bottom < {-by}")


def test_an_open_output_above_the_reader_never_moves_them(
        stack: Stack, api: Api, chat: ChatPage) -> None:
    sid, call, message_id, stdout = open_watched_build(stack, api, chat)
    read_below(chat, chat.shell_row(message_id))
    place = first_visible(chat)

    # The output above grows (each answer draws the region again), then the command ends and
    # its exit line appears: the row read stays where it was, to the pixel.
    for step in range(4):
        api.publish(sid, codex_delta(call, "".join(f"compiled module {step}-{n}\n"
                                                   for n in range(4))))
        expect(stdout).to_contain_text(f"compiled module {step}-3")
        settled(chat)
        assert_in_place(chat, place)
    api.publish(sid, codex_end(call, "done\n", 1))
    expect(chat.body(message_id).get_by_test_id("shell-exit")).to_have_text("Exit code 1")
    settled(chat)
    assert_in_place(chat, place)


def test_an_output_drawn_again_off_screen_keeps_its_real_height(
        stack: Stack, api: Api, chat: ChatPage) -> None:
    # A region drawn again gets new chunks, and a chunk the browser has not laid out counted
    # 20 lines: off screen, a two-line output stood 24rem tall, and shrank back when it came
    # into view, moving whatever the reader read below it.
    sid, call, message_id, stdout = open_watched_build(stack, api, chat)
    # Far enough that the browser does not lay its chunks out (content-visibility: auto).
    viewport = chat.page.viewport_size
    assert viewport is not None
    read_below(chat, chat.shell_row(message_id), by=2 * viewport["height"])

    api.publish(sid, codex_delta(call, "one more line\n"))
    expect(stdout).to_contain_text("one more line")
    settled(chat)
    assert bottom_of(stdout) < 0  # still off screen
    off_screen = float(stdout.evaluate("el => el.getBoundingClientRect().height"))
    wheel_until(chat, -200, f"() => document.querySelector('[data-message-id=\"{message_id}\"]"
                            " [data-testid=shell-output-stdout]').getBoundingClientRect().top > 0")
    settled(chat)
    on_screen = float(stdout.evaluate("el => el.getBoundingClientRect().height"))
    assert off_screen == on_screen


def test_live_messages_never_unmount_the_top_a_reader_is_reading(
        stack: Stack, api: Api, chat: ChatPage) -> None:
    # 238 messages: every one is mounted once the reader is at the top, so each live message
    # grew the window past its 240 rows, and the row at the top was unmounted: the row read
    # went up by a row's height a message, then away, and nothing mounted it again.
    session_id, ids = long_session(api, 238)
    chat.open(f"{stack.rest_url}/sessions/{session_id}")
    listed = chat.page.get_by_test_id("message-list")
    wheel_until(chat, -5000, "() => window.scrollY === 0 && document.querySelector("
                             "'[data-testid=message-list]').dataset.hasOlder === 'false'")
    expect(chat.shell_row(ids[0])).to_have_count(1)
    place = first_visible(chat)
    assert place[0] == ids[0]

    live = [api.play(session_id, [codex_start(f"live{n}", f"echo live {n}")]) for n in range(6)]
    # Then a row mounted below ends: once it shows so, the page has handled every live message
    # (the feed is in order), and the frame after it is when the window is trimmed.
    api.publish(session_id, codex_end("c120", "ok\n", 0))
    expect(chat.shell_row(ids[120])).to_have_attribute("data-result", "success")
    settled(chat)
    assert first_visible(chat) == place
    assert int(listed.get_attribute("data-mounted") or 0) <= 240

    # The rows set aside below are mounted again once the reader scrolls down to them.
    wheel_until(chat, 5000, f"() => !!document.querySelector('[data-message-id=\"{live[-1]}\"]')"
                            " && window.innerHeight + window.scrollY >="
                            " document.documentElement.scrollHeight - 2")
    expect(chat.shell_row(live[-1])).to_be_in_viewport()
    assert int(listed.get_attribute("data-mounted") or 0) <= 240


def test_an_output_opened_on_the_last_row_comes_into_view(
        stack: Stack, api: Api, chat: ChatPage, viewport: str) -> None:
    sid = api.new_session("codex")["id"]
    api.start_turn(sid)
    for index in range(12):
        api.play(sid, [codex_start(f"c{index}", f"echo {index}"),
                       codex_end(f"c{index}", "ok\n", 0)])
    last = api.play(sid, [codex_start("log", "cat build.log"),
                          codex_end("log", "".join(f"line {n}\n" for n in range(60)), 0)])
    chat.open(f"{stack.rest_url}/sessions/{sid}")
    toggle = chat.toggle(last)
    expect(toggle).to_be_in_viewport()

    body = chat.expand_finished(last)
    expect(body.get_by_test_id("shell-exit")).to_have_text("Exit code 0")
    chat.page.wait_for_function(
        "el => el.getBoundingClientRect().bottom <= window.innerHeight",
        arg=body.element_handle())
    assert top_of(toggle) >= 0  # the row it opened from is still on screen
