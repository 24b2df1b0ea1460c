"""C0 and C1 control characters, and words without a space in the scripts Chromium breaks into
lines with a dictionary, in what the page draws (web/controls.js, web/long-words.js, docs/web.md,
ADR 0125).

`a\\b` repeated 87,000 times in a reply, a prompt or a title kept Chromium's main thread busy
2.6 to 3.5 s (each control a box laid out on its own); chat text now draws its controls as
markers, as a command and a title do, a run as one marker. 256 KiB of Thai with no space took
1.5 to 3.4 s in a command, a reply, a prompt, a title or an output (the line breaker's
dictionary over one word); past its first 1,000 characters such a word now goes on in a
`.long-word` span that breaks anywhere.

The tests assert what is drawn, never how long it took: without the change they fail on the
text and the classes at once."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Locator, expect
from web.chat import ChatPage, user_text

from support.acp import agent_text, codex_end, codex_start
from support.rest import Api, unique
from support.stack import Stack

pytestmark = [pytest.mark.browser, pytest.mark.slow]

BS = "\b"
ESC = "\x1b"
BEL = "\x07"
MAX_MARKERS = 200  # web/bidi.js
TIMES = "\u00d7"  # the sign a marker counts a run with
MAX_WORD = 1_000  # web/long-words.js
# Any control the page would draw as itself (tab, line feed and carriage return aside).
DRAWN_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")

THAI = "ภาษาไทยเป็นภาษาที่ไม่มีการเว้นวรรคระหว่างคำสวัสดีครับขอบคุณมาก"
LAO = "ພາສາລາວເປັນພາສາທີ່ບໍ່ມີການຍະຫວ່າງລະຫວ່າງຄຳສະບາຍດີ"
KHMER = "ភាសាខ្មែរមិនមានដកឃ្លារវាងពាក្យទេសួស្តីអរគុណ"
MYANMAR = "မြန်မာဘာသာစကားသည်စကားလုံးများကြားတွင်နေရာလွတ်မရှိပါမင်္ဂလာပါ"


def word(unit: str, length: int) -> str:
    """`unit` repeated to `length` characters: one word, no space."""
    return (unit * (length // len(unit) + 1))[:length]


def text_of(locator: Locator) -> str:
    text = locator.text_content()
    assert text is not None
    return text


def long_text(locator: Locator) -> str:
    """The text of the `.long-word` spans under `locator`, in order."""
    texts: list[str] = locator.locator(".long-word").evaluate_all(
        "spans => spans.map((span) => span.textContent)")
    return "".join(texts)


def assert_long_past_the_bound(locator: Locator, whole: str, long_word: str) -> None:
    """The field shows `whole` as it is, and all of `long_word`, the word it ends with, past its
    first MAX_WORD characters (a mark or two more: never inside a cluster) is in `.long-word`
    spans."""
    assert text_of(locator) == whole
    assert whole.endswith(long_word)
    rest = long_text(locator)
    assert long_word.endswith(rest), "a long word's rest is the end of the word"
    assert len(long_word) - MAX_WORD - 4 <= len(rest) <= len(long_word) - MAX_WORD, len(rest)


def test_controls_in_chat_text_titles_and_commands_are_markers_and_the_copy_is_real(
        stack: Stack, api: Api, chat: ChatPage) -> None:
    session = api.new_session("codex")
    api.start_turn(session["id"])
    api.publish(session["id"], user_text(f"Prompt x{BS * 87_000}y"))
    api.publish(session["id"], agent_text(
        f"Reply x{BS * 87_000}y, *em{BEL}* and `code{ESC}[31m`\n\n```\nblock\x00\x85\n```"))
    api.publish(session["id"], user_text("And in bold?"))  # the next reply is a message of its own
    overstruck = "".join(f"{c}{BS}{c}" for c in "bold" * 100)  # man's bold: 400 backspaces
    api.publish(session["id"], agent_text(f"Overstruck {overstruck}"))
    tool_id = api.play(session["id"], [{
        "sessionUpdate": "tool_call", "toolCallId": unique("read"), "kind": "read",
        "title": f"Read {ESC}[31mfile{ESC}[0m{BS * 5000}", "status": "completed"}])
    rtl_id = api.play(session["id"], [{
        "sessionUpdate": "tool_call", "toolCallId": unique("read"), "kind": "read",
        "title": f"{BS}שלום עולם", "status": "completed"}])
    call = unique("call")
    command = f"printf 'a{BS}b\\n' # {BS * 3}"
    message_id = api.play(session["id"], [codex_start(call, command), codex_end(call, "ab\n", 0)])
    chat.open(f"{stack.rest_url}/?session={session['id']}")

    prompt, reply, _, struck = chat.page.get_by_test_id("chat-text").all()
    assert text_of(prompt) == f"Prompt x⟨U+0008 {TIMES}87000⟩y"
    expect(prompt.locator(".bidi-control")).to_have_attribute(
        "title", f"87000 characters, shown instead of applied: BACKSPACE {TIMES}87000")
    assert text_of(reply.locator("p")) == (
        f"Reply x⟨U+0008 {TIMES}87000⟩y, em⟨U+0007⟩ and code⟨U+001B⟩[31m")
    assert text_of(reply.locator("pre")) == "block⟨U+0000 U+0085⟩"
    # 400 backspaces between letters: 200 markers, a note, then written into the text.
    expect(struck.locator(".bidi-control")).to_have_count(MAX_MARKERS + 1)
    expect(struck.locator(".bidi-control--limit")).to_have_count(1)
    assert text_of(struck).count("<U+0008>") == 400 - MAX_MARKERS

    title = chat.page.locator(f'[data-testid=tool-call-row][data-message-id="{tool_id}"]'
                              ).get_by_test_id("tool-call-title")
    assert text_of(title) == f"Read ⟨U+001B⟩[31mfile⟨U+001B⟩[0m⟨U+0008 {TIMES}5000⟩"
    # A title takes the direction of its first strong character, markers skipped: the
    # marker before the Hebrew is on its right.
    rtl = chat.page.locator(f'[data-testid=tool-call-row][data-message-id="{rtl_id}"]'
                            ).get_by_test_id("tool-call-title")
    assert text_of(rtl) == "⟨U+0008⟩שלום עולם"
    marker_left = rtl.locator(".bidi-control").evaluate("el => el.getBoundingClientRect().left")
    text_left = rtl.evaluate("el => { const r = document.createRange();"
                             " r.selectNodeContents(el.lastChild);"
                             " return r.getBoundingClientRect().left; }")
    assert marker_left > text_left, "the marker of an RTL title's first character is on its right"

    row = chat.shell_row(message_id)
    assert text_of(row.get_by_test_id("shell-command")) == (
        f"printf 'a⟨U+0008⟩b\\n' # ⟨U+0008 {TIMES}3⟩")

    # Nowhere in the page is a control drawn as itself.
    body_text: str = chat.page.evaluate("document.body.textContent")
    assert not DRAWN_CONTROL.search(body_text), DRAWN_CONTROL.findall(body_text)[:5]

    chat.page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    assert chat.copied(row.get_by_test_id("shell-command-copy")) == command

    api.publish(session["id"], agent_text("still here"))
    expect(chat.page.get_by_test_id("chat-text").last).to_have_text("still here")


def test_a_long_word_in_a_script_broken_with_a_dictionary_breaks_anywhere_past_1000_characters(
        stack: Stack, api: Api, chat: ChatPage, viewport: str) -> None:
    thai = word(THAI, 5_000)
    session = api.new_session("codex")
    api.start_turn(session["id"])
    api.publish(session["id"], user_text(f"Prompt {thai}"))
    # A word goes on through an emphasis; prose with spaces and other scripts stay as they are.
    prose = " ".join([THAI[:40]] * 100)
    api.publish(session["id"], agent_text(
        f"Reply {thai[:2_000]}*{thai[2_000:]}*\n\n{prose}\n\n{word(LAO, 2_000)}\n\n"
        f"{word(KHMER, 2_000)}\n\n{word(MYANMAR, 2_000)}\n\n{'x' * 5_000}"))
    tool_id = api.play(session["id"], [{
        "sessionUpdate": "tool_call", "toolCallId": unique("read"), "kind": "read",
        "title": f"Read {thai}", "status": "completed"}])
    call = unique("call")
    command = f"echo {thai}"
    # A word split by colours is one word.
    output = f"{ESC}[31m{thai[:3_000]}{ESC}[32m{thai[3_000:]}{ESC}[0m\nok {prose}\n"
    message_id = api.play(session["id"], [codex_start(call, command, work_dir=f"/tmp/{thai}"),
                                          codex_end(call, output, 0)])
    chat.open(f"{stack.rest_url}/?session={session['id']}")

    prompt, reply = chat.page.get_by_test_id("chat-text").all()
    assert_long_past_the_bound(prompt, f"Prompt {thai}", thai)
    paragraphs = reply.locator("p")
    expect(paragraphs).to_have_count(6)
    assert_long_past_the_bound(paragraphs.nth(0), f"Reply {thai}", thai)
    expect(paragraphs.nth(0).locator("em .long-word")).to_have_count(1)
    expect(paragraphs.nth(1).locator(".long-word")).to_have_count(0)  # prose
    for index, unit in ((2, LAO), (3, KHMER), (4, MYANMAR)):
        assert_long_past_the_bound(paragraphs.nth(index), word(unit, 2_000), word(unit, 2_000))
    expect(paragraphs.nth(5).locator(".long-word")).to_have_count(0)  # no such script
    title = chat.page.locator(f'[data-testid=tool-call-row][data-message-id="{tool_id}"]'
                              ).get_by_test_id("tool-call-title")
    assert_long_past_the_bound(title, f"Read {thai}", thai)
    row = chat.shell_row(message_id)
    assert_long_past_the_bound(row.get_by_test_id("shell-command"), command, thai)
    work_dir = f"/tmp/{thai}"  # one word: the path
    assert_long_past_the_bound(row.get_by_test_id("shell-workdir"), work_dir, work_dir)

    body = chat.expand_finished(message_id)
    stdout = body.get_by_test_id("shell-output-stdout")
    expect(stdout).to_have_text(f"{thai}\nok {prose}\n")
    expect(stdout.locator(".ansi-fg-1 .long-word, .ansi-fg-2 .long-word")).to_have_count(2)
    assert len(long_text(stdout)) == len(thai) - MAX_WORD  # no marks at the bound here
    chat.assert_no_horizontal_overflow()

    chat.page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    assert chat.copied(body.get_by_test_id("shell-output-copy")) == f"{thai}\nok {prose}\n"
    assert chat.copied(row.get_by_test_id("shell-command-copy")) == command
