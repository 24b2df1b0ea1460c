"""Terminal output in the expanded body (issue 14 "Output"): ANSI colours and attributes drawn
as styled text, other escape sequences dropped, carriage returns rewriting the line, markup kept
as text; the truncated marker on the collapsed row; copying the command and the output, and
downloading the stored output."""

from __future__ import annotations

import pytest
from playwright.sync_api import Locator, expect
from web.chat import ChatPage, codex_delta

from support.acp import codex_end, codex_start
from support.rest import Api, unique
from support.stack import Stack

pytestmark = [pytest.mark.browser, pytest.mark.slow]

E = "\x1b"
COLOURED = (
    f"{E}]0;pytest: tests{E}\\"
    f"{E}[1m============ test session starts ============{E}[0m\n"
    f"tests/test_parse.py {E}[32m.{E}[0m{E}[32m.{E}[0m{E}[31mF{E}[0m\n"
    f"{E}[38;5;208mwarning{E}[0m: {E}[3mslow{E}[23m {E}[4mfixture{E}[24m "
    f"{E}[38;2;10;120;200mtruecolor{E}[0m {E}[2mdim{E}[22m\n"
    f"see {E}]8;;https://example.com/report{E}\\the report{E}]8;;{E}\\\n"
    f"{E}[?25l<b>not bold</b><script>window.__ansiInjected = 1</script>{E}[?25h\n"
    # A malformed CSI is dropped whole; an ESC that starts no sequence is dropped alone.
    f"bad {E}[38;2;999;-1;0mcolour,{E}\ttab kept\n"
    "Downloading  10% [#         ]\rDownloading  50% [#####     ]\r"
    f"Downloading 100% [##########]\n{E}[1;31m1 failed{E}[0m, {E}[32m2 passed{E}[0m in 0.12s\n"
)
SHOWN = (
    "============ test session starts ============\n"
    "tests/test_parse.py ..F\n"
    "warning: slow fixture truecolor dim\n"
    "see the report\n"
    "<b>not bold</b><script>window.__ansiInjected = 1</script>\n"
    "bad colour,\ttab kept\n"
    "Downloading 100% [##########]\n"
    "1 failed, 2 passed in 0.12s\n"
)


def coloured_command(api: Api, output: str = COLOURED) -> tuple[str, str]:
    session = api.new_session("codex")
    api.start_turn(session["id"])
    call = unique("call")
    message_id = api.play(session["id"], [codex_start(call, "pytest -q --color=yes"),
                                          codex_end(call, output, 1)])
    return session["id"], message_id


def test_colours_and_progress_lines_render_as_a_terminal_shows_them(
        stack: Stack, api: Api, chat: ChatPage, viewport: str) -> None:
    session_id, message_id = coloured_command(api)
    chat.open(f"{stack.rest_url}/?session={session_id}")
    body = chat.expand(message_id)
    expect(body).to_have_attribute("data-state", "ready")
    stdout = body.get_by_test_id("shell-output-stdout")

    assert stdout.text_content() == SHOWN  # no stray "[31m", the bar in its final state
    assert "\x1b" not in (stdout.text_content() or "")
    # Markup in the output is text: no element came from it, no script ran.
    assert stdout.locator("b, script, a").count() == 0
    assert chat.page.evaluate("window.__ansiInjected") is None

    def look(text: str) -> dict[str, str]:
        span = stdout.locator("span:not(.output__chunk)", has_text=text).first
        return dict(span.evaluate(
            "el => { const s = getComputedStyle(el); return {cls: el.className, color: s.color,"
            " background: s.backgroundColor, weight: s.fontWeight, style: s.fontStyle,"
            " decoration: s.textDecorationLine, opacity: s.opacity}; }"))

    failed = look("1 failed")
    assert failed["cls"] == "ansi-bold ansi-fg-1"
    assert int(failed["weight"]) >= 700
    passed = look("2 passed")
    assert passed["color"] != failed["color"]
    assert look("warning")["color"] == "rgb(255, 135, 0)"
    assert look("truecolor")["color"] == "rgb(10, 120, 200)"
    assert look("slow")["style"] == "italic"
    assert look("fixture")["decoration"] == "underline"
    assert float(look("dim")["opacity"]) < 1
    # The byte counts still describe the stored text, escape sequences included.
    stored_bytes = len(COLOURED.encode())
    expect(chat.toggle(message_id)).to_contain_text(f"{stored_bytes} B")
    chat.assert_no_horizontal_overflow()
    chat.screenshot("coloured-output")


def test_copy_command_and_output_and_download_the_stored_text(
        stack: Stack, api: Api, chat: ChatPage) -> None:
    chat.page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    session_id, message_id = coloured_command(api)
    chat.open(f"{stack.rest_url}/?session={session_id}")
    row = chat.shell_row(message_id)

    assert chat.copied(row.get_by_test_id("shell-command-copy")) == "pytest -q --color=yes"

    body = chat.expand(message_id)
    expect(body).to_have_attribute("data-state", "ready")
    assert chat.copied(body.get_by_test_id("shell-output-copy")) == SHOWN

    with chat.page.expect_download() as download_info:
        body.get_by_test_id("shell-output-download").click()
    download = download_info.value
    assert download.suggested_filename == f"output-{message_id}.log"
    saved = download.path().read_bytes()
    assert saved == COLOURED.encode()  # the stored text, escapes and carriage returns kept


def test_truncated_output_is_marked_on_the_collapsed_row(
        stack: Stack, api: Api, chat: ChatPage, viewport: str) -> None:
    line = f"{E}[32mok{E}[0m " + "x" * 70 + "\n"
    session_id, message_id = coloured_command(api, line * (300 * 1024 // len(line)))
    short_session, short_id = coloured_command(api)
    chat.open(f"{stack.rest_url}/?session={session_id}")

    expect(chat.toggle(message_id).get_by_test_id("shell-truncated-marker")).to_have_text("truncated")
    expect(chat.body(message_id)).to_have_count(0)  # said before anything is fetched
    assert chat.shell_requests() == []
    chat.screenshot("truncated-marker")

    chat.open(f"{stack.rest_url}/?session={short_session}")
    expect(chat.toggle(short_id)).to_be_visible()
    expect(chat.page.get_by_test_id("shell-truncated-marker")).to_have_count(0)


def test_a_long_coloured_output_draws_its_tail_first_and_the_rest_on_scrolling(
        stack: Stack, api: Api, chat: ChatPage) -> None:
    lines = [f"{E}[32mok{E}[0m line {index:04} {E}[38;5;208mwarn{E}[0m" for index in range(2000)]
    session_id, message_id = coloured_command(api, "\n".join(lines) + "\n")
    chat.open(f"{stack.rest_url}/?session={session_id}")
    body = chat.expand(message_id)
    expect(body).to_have_attribute("data-state", "ready")
    stdout = body.get_by_test_id("shell-output-stdout")
    expect(stdout).to_contain_text("line 1999 warn")  # the tail at once, in colour
    expect(stdout.locator("span.ansi-fg-2", has_text="ok").last).to_be_visible()
    chunks = stdout.locator(".output__chunk")
    assert chunks.count() == 100  # 2,000 lines in chunks of 20
    drawn = stdout.locator(".output__chunk[data-drawn=true]")
    # Only the chunks in or near the viewport (how many depends on its height); the rest
    # waits until it is scrolled to.
    assert drawn.count() < 25

    scroll_up_as_the_reader(chat, stdout)
    stdout.evaluate("el => { el.scrollTop = 0; }")
    first = chunks.first
    expect(first).to_have_attribute("data-drawn", "true")
    expect(first).to_contain_text("line 0000 warn")
    warn = first.locator("span", has_text="warn").first
    assert warn.evaluate("el => getComputedStyle(el).color") == "rgb(255, 135, 0)"
    # Copying takes the whole output, drawn or not.
    chat.page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    copied = chat.copied(body.get_by_test_id("shell-output-copy"))
    assert copied.startswith("ok line 0000 warn\n")
    assert copied.endswith("ok line 1999 warn\n")


def test_output_that_never_resets_keeps_its_colour_in_every_chunk_scrolled_to(
        stack: Stack, api: Api, chat: ChatPage) -> None:
    # One colour set on the first line and never reset: each chunk's style comes from the
    # chunks before it, whichever order they are drawn in.
    lines = [f"compiling {E}[1mmodule_{index:04}{E}[22m" for index in range(2000)]
    session_id, message_id = coloured_command(api, f"{E}[32m" + "\n".join(lines) + "\n")
    chat.open(f"{stack.rest_url}/?session={session_id}")
    body = chat.expand(message_id)
    expect(body).to_have_attribute("data-state", "ready")
    stdout = body.get_by_test_id("shell-output-stdout")
    chunks = stdout.locator(".output__chunk")
    expect(chunks.last.locator("span.ansi-fg-2.ansi-bold", has_text="module_1999")).to_have_count(1)

    scroll_up_as_the_reader(chat, stdout)
    for index in (50, 0, 49):  # the middle, the top, then the chunk just above the middle
        chunk = chunks.nth(index)
        chunk.scroll_into_view_if_needed()
        expect(chunk).to_have_attribute("data-drawn", "true")
        module = chunk.locator("span.ansi-fg-2.ansi-bold", has_text=f"module_{index * 20:04}")
        expect(module).to_have_count(1)
        plain_green = chunk.locator("span.ansi-fg-2:not(.ansi-bold)", has_text="compiling")
        expect(plain_green.first).to_be_visible()


# How far the output's last character is below the bottom of the region's viewport (px; 0 or
# less when it is in view), and whether the region is scrolled to its end.
TAIL_GAP = """el => {
    const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
    let last = null;
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        if (node.data.trim()) last = node;
    }
    const range = document.createRange();
    const end = last.data.trimEnd().length;
    range.setStart(last, end - 1);
    range.setEnd(last, end);
    const box = el.getBoundingClientRect();
    return range.getBoundingClientRect().bottom - (box.bottom - el.clientTop);
}"""


def scroll_up_as_the_reader(chat: ChatPage, region: Locator) -> None:
    """Scrolls the region up a little with the wheel, as a reader leaving its end does: the
    region then stops following its end (web/follow-tail.js), and a script may scroll it to
    any chunk without being taken back there."""
    region.hover()
    chat.page.mouse.wheel(0, -200)
    for _ in range(50):  # until the wheel's scroll has landed
        if tail_gap(region) > 1:
            return
        chat.pump(100)
    raise AssertionError("the wheel did not scroll the region up")


def tail_gap(region: Locator) -> float:
    return float(region.evaluate(TAIL_GAP))


def expect_tail_in_view(chat: ChatPage, region: Locator, timeout_ms: float = 5_000) -> None:
    """The output's last character comes into view within `timeout_ms` (a loaded machine may
    take a few frames to lay the last chunks out), and stays there."""
    for _ in range(int(timeout_ms / 100)):
        if tail_gap(region) <= 1:
            break
        chat.pump(100)
    chat.pump(200)
    assert tail_gap(region) <= 1


def varied_lines(count: int, start: int = 0) -> str:
    """Lines of every length, long ones wrapping several times: chunks far from the 20-line
    height the region estimates for a chunk it has not laid out."""
    return "".join(f"line {index:05} " + "word " * ((index * 37) % 90) + "\n"
                   for index in range(start, start + count))


def test_an_output_opens_at_its_end_however_its_chunks_are_estimated(
        stack: Stack, api: Api, chat: ChatPage, viewport: str) -> None:
    output = varied_lines(2000)
    output = output[-256 * 1024:]
    session_id, message_id = coloured_command(api, output)
    chat.open(f"{stack.rest_url}/?session={session_id}")
    body = chat.expand_finished(message_id)
    stdout = body.get_by_test_id("shell-output-stdout")
    expect(stdout).to_contain_text("line 01999")
    expect_tail_in_view(chat, stdout)


def test_an_open_running_output_follows_its_end_until_the_reader_scrolls_up(
        stack: Stack, api: Api, chat: ChatPage) -> None:
    session = api.new_session("codex")
    api.start_turn(session["id"])
    call = unique("call")
    message_id = api.play(session["id"], [codex_start(call, "make"),
                                          codex_delta(call, varied_lines(40))])
    chat.open(f"{stack.rest_url}/?session={session['id']}")
    body = chat.expand(message_id)
    stdout = body.get_by_test_id("shell-output-stdout")
    expect(stdout).to_contain_text("line 00039")

    # Some 60 KiB more, a piece at a time: the region keeps its end in view.
    for start in range(40, 440, 40):
        api.publish(session["id"], codex_delta(call, varied_lines(40, start)))
        expect(stdout).to_contain_text(f"line {start + 39:05}")
        expect_tail_in_view(chat, stdout)

    # The reader scrolls up: new output no longer moves the region.
    stdout.hover()
    chat.page.mouse.wheel(0, -2000)
    chat.pump(300)
    top = stdout.evaluate("el => el.scrollTop")
    api.publish(session["id"], codex_delta(call, varied_lines(40, 440)))
    expect(stdout).to_contain_text("line 00479")
    chat.pump(300)
    assert stdout.evaluate("el => el.scrollTop") == top
    assert tail_gap(stdout) > 100

    # Back at the end (with the wheel: only the reader's scrolls decide), it follows again.
    chat.page.mouse.wheel(0, 100_000)
    chat.pump(300)
    api.publish(session["id"], codex_delta(call, varied_lines(40, 480)))
    expect(stdout).to_contain_text("line 00519")
    expect_tail_in_view(chat, stdout)
