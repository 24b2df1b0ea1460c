"""A running command's open output that the reader has left the end of stays as they left it
while output arrives (docs/web.md "The output disclosure": it "stays there as output arrives
until you scroll up"): the line they read stays where it is on screen, to the pixel, the
region keeps the keyboard's focus, and text they selected stays selected. Going up with Page
Up or the wheel goes up a page at a time, over chunks not drawn yet too.

Each poll that brought new text used to move the command's row in the list (past its turn's
end marker), which put the region back at its first line and dropped the focus and the
selection; the region was also drawn again from scratch, and chunks above the reader, laid out
before they were drawn, stood 0 px tall.

Every wait is for a condition: the text a poll brings, then the region read once two
animation frames in a row show it the same (the page keeps the reader's place before the
browser paints)."""

from __future__ import annotations

import itertools

import pytest
from playwright.sync_api import Locator, expect
from web.chat import ChatPage, codex_delta

from support.acp import codex_start
from support.rest import Api, unique
from support.stack import Stack

pytestmark = [pytest.mark.browser, pytest.mark.slow]

# The region as the reader sees it, read at each animation frame until two readings in a row
# agree (at most 100 frames): its scroll position, the line at the top of its viewport, that
# line's top below the viewport's top (px), and whether it has the keyboard's focus.
REGION_PLACE = """async (pre) => {
  const frame = () => new Promise(r => requestAnimationFrame(r));
  const read = () => {
    const box = pre.getBoundingClientRect();
    const top = box.top + pre.clientTop;
    const caret = document.caretRangeFromPoint(box.left + 16, top + 14);
    if (!caret || !pre.contains(caret.startContainer)) return null;
    const text = caret.startContainer.data ?? '';
    const start = text.lastIndexOf('\\n', caret.startOffset - 1) + 1;
    const end = text.indexOf('\\n', start);
    const line = text.slice(start, end < 0 ? undefined : end);
    const range = document.createRange();
    range.setStart(caret.startContainer, start);
    range.setEnd(caret.startContainer, Math.min(start + 1, text.length));
    const lineTop = range.getBoundingClientRect().top - top;
    return [pre.scrollTop, line, lineTop, document.activeElement === pre];
  };
  let last = null;
  for (let n = 0; n < 100; n += 1) {
    await frame();
    const now = read();
    if (now && last && JSON.stringify(now) === JSON.stringify(last)) return now;
    last = now;
  }
  return last; }"""

# The end of the region is in view, once two frames agree (the last chunks laid out).
AT_END = """async (pre) => {
  const frame = () => new Promise(r => requestAnimationFrame(r));
  let last = NaN;
  for (let n = 0; n < 200; n += 1) {
    await frame();
    const gap = pre.scrollHeight - pre.scrollTop - pre.clientHeight;
    if (gap <= 1 && gap === last) return true;
    last = gap;
  }
  return false; }"""


# What `place` reads: (scroll position, the line at the top, its top below the viewport's
# top, whether the region has the focus).
Place = tuple[float, str, float, bool]


def line(index: int) -> str:
    return f"line {index:04} compiling module_{index}.c\n"


def lines(start: int, stop: int) -> str:
    return "".join(line(index) for index in range(start, stop))


def place(region: Locator) -> Place:
    """(scroll position, the line at the top, its top below the viewport's top, focused)."""
    found = region.evaluate(REGION_PLACE)
    assert found is not None, "no line at the region's top"
    return float(found[0]), str(found[1]), float(found[2]), bool(found[3])


def running_output(stack: Stack, api: Api, chat: ChatPage,
                   output: str) -> tuple[str, str, str, Locator]:
    """A running command that printed `output`, its output open in the page and at its end:
    (session, its call, its message, the output's region)."""
    sid = api.new_session("codex")["id"]
    api.start_turn(sid)
    call = unique("build")
    message_id = api.play(sid, [codex_start(call, "make -j8")])
    for at in range(0, len(output), 60_000):
        api.publish(sid, codex_delta(call, output[at:at + 60_000]))
    chat.open(f"{stack.rest_url}/sessions/{sid}")
    region = chat.expand(message_id).get_by_test_id("shell-output-stdout")
    expect(region).to_contain_text(output.rstrip("\n").rsplit("\n", 1)[-1])
    assert region.evaluate(AT_END), "the region never reached its end"
    return sid, call, message_id, region


# The region's scroll has landed after a move from `before`: it left that position and two
# frames in a row show it at the same place (a wheel's smooth scroll lasts a few frames), for
# at most 200 frames.
LANDED = """async ([pre, before]) => {
  const frame = () => new Promise(r => requestAnimationFrame(r));
  let last = before;
  for (let n = 0; n < 200; n += 1) {
    await frame();
    if (pre.scrollTop !== before && pre.scrollTop === last) return true;
    last = pre.scrollTop;
  }
  return false; }"""


# Whether the region left `before` within 60 frames.
MOVED = """async ([pre, before]) => {
  const frame = () => new Promise(r => requestAnimationFrame(r));
  for (let n = 0; n < 60; n += 1) { await frame(); if (pre.scrollTop !== before) return true; }
  return false; }"""


def page_up(chat: ChatPage, region: Locator) -> None:
    """The reader presses Page Up in the region, and its scroll lands. Headless Chromium now
    and then takes a key press without scrolling at all (the key reaches the focused region
    and nothing moves); a reader would press again, and so does this, up to three times."""
    region.focus()
    before = region.evaluate("pre => pre.scrollTop")
    assert before > 0, "at the region's top already"
    for _ in range(3):
        chat.page.keyboard.press("PageUp")
        if region.evaluate(f"pre => ({MOVED})([pre, {before}])"):
            break
    assert region.evaluate(f"pre => ({LANDED})([pre, {before}])"), "Page Up did not scroll"


def scroll_up(chat: ChatPage, region: Locator, pages: int = 1) -> None:
    """The reader goes up in the region with the wheel, a page (the region's height) at a
    time, each turn waited for until its scroll has landed. The region keeps the focus it
    has: a reader may go on with the keyboard."""
    region.hover()
    page = float(region.evaluate("pre => pre.clientHeight"))
    for _ in range(pages):
        before = region.evaluate("pre => pre.scrollTop")
        chat.page.mouse.wheel(0, -page)
        assert region.evaluate(f"pre => ({LANDED})([pre, {before}])"), "the wheel did not scroll"


def assert_same_place(before: Place, after: Place) -> None:
    assert after[1] == before[1], (before, after)
    assert abs(after[2] - before[2]) < 1, (before, after)
    assert after[3] == before[3], "the focus moved"


def test_a_reader_scrolled_up_in_a_running_output_stays_on_the_line_they_read(
        stack: Stack, api: Api, chat: ChatPage, viewport: str) -> None:
    sid, call, _, region = running_output(stack, api, chat, lines(0, 400))
    region.focus()  # a keyboard reader's, say
    scroll_up(chat, region, 2)
    read = place(region)
    assert read[3], "the region has the focus"
    assert read[1].startswith("line 03"), read

    for index in range(400, 404):  # each poll brings a line
        api.publish(sid, codex_delta(call, line(index)))
        expect(region).to_contain_text(line(index).strip())
        assert_same_place(read, place(region))

    # The reader goes on reading up from there.
    scroll_up(chat, region)
    higher = place(region)
    assert higher[1] < read[1], (read, higher)


def test_going_up_a_page_at_a_time_goes_up_a_page_each_time(
        stack: Stack, api: Api, chat: ChatPage, viewport: str) -> None:
    """Each chunk above, drawn and laid out on the way, stands where its lines will be: going
    up a page (Page Up, or the wheel) used to stand still or go down as chunks laid out before
    they were drawn collapsed."""
    _, _, _, region = running_output(stack, api, chat, lines(0, 400))
    page = float(region.evaluate(
        "pre => pre.clientHeight / parseFloat(getComputedStyle(pre).lineHeight)"))  # in lines
    shown = [place(region)[1]]
    for _ in range(12):
        page_up(chat, region)
        shown.append(place(region)[1])
    numbers = [int(text.split()[1]) for text in shown]
    steps = [above - below for above, below in itertools.pairwise(numbers)]
    # A page of lines each time, not none, not back down, and not hundreds at once over
    # chunks that collapsed.
    assert all(0.6 * page <= step <= 1.4 * page for step in steps), (page, numbers, steps)


def test_text_selected_in_a_running_output_stays_selected_as_output_arrives(
        stack: Stack, api: Api, chat: ChatPage) -> None:
    sid, call, _, region = running_output(stack, api, chat, lines(0, 30) + "building 10%")
    # The reader selects from line 18 to line 27: across the end of the first chunk, into the
    # last one, which goes on with every poll.
    selected = region.evaluate("""pre => {
      const walker = document.createTreeWalker(pre, NodeFilter.SHOW_TEXT);
      const at = (needle) => { for (let n = walker.nextNode(); n; n = walker.nextNode()) {
        const i = n.data.indexOf(needle); if (i >= 0) return [n, i]; } };
      const [from, fromAt] = at('line 0018');
      walker.currentNode = pre;
      const [to, toAt] = at('line 0027');
      getSelection().setBaseAndExtent(from, fromAt + 5, to, toAt + 9);
      return getSelection().toString(); }""")
    assert selected.startswith("0018"), selected
    assert selected.endswith("line 0027"), selected

    # The progress line below it is written over (a carriage return), then finished, and more
    # lines come: the last chunk fills up and a new one starts.
    api.publish(sid, codex_delta(call, "\rbuilding 55%"))
    expect(region).to_contain_text("building 55%")
    assert region.evaluate(AT_END)
    assert chat.page.evaluate("getSelection().toString()") == selected
    api.publish(sid, codex_delta(call, "\rbuilding 100%\n"))
    for index in range(31, 45):
        api.publish(sid, codex_delta(call, line(index)))
    expect(region).to_contain_text(line(44).strip())
    assert region.evaluate(AT_END)
    assert chat.page.evaluate("getSelection().toString()") == selected


def test_a_reader_scrolled_up_in_an_output_past_256_kib_stays_as_its_head_is_cut(
        stack: Stack, api: Api, chat: ChatPage) -> None:
    """Past 256 KiB the server keeps the newest text: every poll cuts the head the reader
    scrolled up from, and the chunks there go or get shorter."""
    sid, call, message_id, region = running_output(stack, api, chat, lines(0, 9_000))
    expect(chat.body(message_id).get_by_test_id("shell-output-truncated")).to_be_visible()
    scroll_up(chat, region, 3)
    read = place(region)

    for start in range(9_000, 9_600, 150):  # some 6 KiB a poll: a chunk or more cut each time
        api.publish(sid, codex_delta(call, lines(start, start + 150)))
        expect(region).to_contain_text(line(start + 149).strip())
        assert_same_place(read, place(region))
