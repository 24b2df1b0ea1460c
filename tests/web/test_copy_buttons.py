"""A copy button's label never moves what is around it (web/shell-row.js, web/style.css,
docs/web.md, ADR 0125).

After `Copy` on a long command, a click on that row's `Copy output` was lost: pressing the mouse
moved the focus, the command's button went from `Copied` back to `Copy`, narrower, the command
wrapped one line shorter and `Copy output` moved some 19 px up before the mouse was released, so
no click reached it and the clipboard still held the command. Each copy button is now as wide as
the widest label it can show (`Copy`, `Copy output`, `Copied`, `Failed`); the output's toggle
as wide as `Show output` or `Hide output`.

Where the page has no asynchronous clipboard (served over http from another host), the copy
went through a textarea that took the focus and left it on the page's body: the button kept
saying `Copied`. The focus now goes back to the button.

A screen reader hears how a copy went from a live region of the page: the focused button's
new label was never read out (and the command's button is named by its aria-label).

The tests assert what was copied and where the buttons are, never a duration."""

from __future__ import annotations

import pytest
from playwright.sync_api import Locator, expect
from web.chat import ChatPage

from support.acp import codex_end, codex_start
from support.rest import Api, unique
from support.stack import Stack

pytestmark = [pytest.mark.browser, pytest.mark.slow]

# One word of 5,005 ASCII characters: a label one character narrower re-wraps it.
COMMAND = "echo " + "abcdefghij" * 500
# Long enough that the page scrolls to reach `Copy output`.
OUTPUT = "x" * 5000 + "\n" + "ok " * 2000 + "\n"

# Makes every copy fail: no asynchronous clipboard, and the selection's copy refused.
NO_COPY = """
Object.defineProperty(Navigator.prototype, 'clipboard', { get: () => undefined });
Document.prototype.execCommand = () => false;
"""
# No asynchronous clipboard, as outside a secure context: the page copies through a selection.
NO_CLIPBOARD = "Object.defineProperty(Navigator.prototype, 'clipboard', { get: () => undefined });"


def long_command(api: Api) -> tuple[str, str]:
    session = api.new_session("codex")
    call = unique("call")
    message_id = api.play(session["id"], [codex_start(call, COMMAND), codex_end(call, OUTPUT, 0)])
    return session["id"], message_id


def place(button: Locator) -> tuple[float, float, float, float]:
    """Where `button` is in the page (not the viewport: the page may scroll between two reads)."""
    box = button.evaluate("(el) => { const r = el.getBoundingClientRect();"
                          " return [r.x + scrollX, r.y + scrollY, r.width, r.height]; }")
    return tuple(box)


def opened_with_clipboard(stack: Stack, api: Api, chat: ChatPage) -> tuple[Locator, Locator]:
    """The long command's row and its expanded output, on a page that may use the
    clipboard."""
    session_id, message_id = long_command(api)
    chat.open(f"{stack.rest_url}/?session={session_id}")
    body = chat.expand_finished(message_id)
    chat.page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    return chat.shell_row(message_id), body


def test_copy_output_right_after_copy_in_the_same_row_copies_the_output(
        stack: Stack, api: Api, chat: ChatPage, viewport: str) -> None:
    row, body = opened_with_clipboard(stack, api, chat)
    copy_command = row.get_by_test_id("shell-command-copy")
    copy_output = body.get_by_test_id("shell-output-copy")
    # A screen reader hears how each copy went: the focused button's new label is not read.
    said = chat.page.get_by_test_id("copy-result")
    expect(said).to_have_attribute("role", "status")

    chat.press(copy_command)
    expect(copy_command).to_have_attribute("data-copied", "true")
    expect(copy_command).to_have_text("Copied")
    expect(said).to_have_text("Command copied")
    assert chat.page.evaluate("navigator.clipboard.readText()") == COMMAND

    # The press takes the focus from `Copy`, which says `Copy` again: the click still lands.
    chat.press(copy_output)
    expect(copy_output).to_have_attribute("data-copied", "true")
    expect(copy_output).to_have_text("Copied")
    expect(said).to_have_text("Output copied")
    expect(copy_command).to_have_text("Copy")
    expect(copy_command).not_to_have_attribute("data-copied", "true")
    assert chat.page.evaluate("navigator.clipboard.readText()") == OUTPUT
    chat.assert_no_horizontal_overflow()


def test_a_copy_button_keeps_its_box_whatever_it_says(
        stack: Stack, api: Api, chat: ChatPage, viewport: str) -> None:
    row, body = opened_with_clipboard(stack, api, chat)
    buttons = [row.get_by_test_id("shell-command-copy"), body.get_by_test_id("shell-output-copy"),
               body.get_by_test_id("shell-output-download")]
    command = row.get_by_test_id("shell-command")
    at_rest = [place(button) for button in buttons]
    command_at_rest = place(command)

    for button, label in ((buttons[0], "Copy"), (buttons[1], "Copy output")):
        expect(button).to_have_text(label)
        chat.press(button)
        expect(button).to_have_text("Copied")
        assert [place(b) for b in buttons] == at_rest, f"{label!r} said 'Copied'"
        assert place(command) == command_at_rest
        button.evaluate("(el) => el.blur()")
        expect(button).to_have_text(label)
        assert [place(b) for b in buttons] == at_rest, f"{label!r} said {label!r} again"

    # A copy that fails says so, in the same box.
    chat.page.evaluate(NO_COPY)
    for button, label, what in ((buttons[0], "Copy", "Command"),
                                (buttons[1], "Copy output", "Output")):
        chat.press(button)
        expect(button).to_have_attribute("data-copied", "false")
        expect(button).to_have_text("Failed")
        expect(chat.page.get_by_test_id("copy-result")).to_have_text(
            f"{what} not copied: the browser refused the clipboard")
        assert [place(b) for b in buttons] == at_rest, f"{label!r} said 'Failed'"
        assert place(command) == command_at_rest
        button.evaluate("(el) => el.blur()")
        expect(button).to_have_text(label)
    chat.assert_no_horizontal_overflow()


def test_without_the_asynchronous_clipboard_the_focus_stays_on_the_button(
        stack: Stack, api: Api, chat: ChatPage) -> None:
    chat.page.add_init_script(script=NO_CLIPBOARD)
    session_id, message_id = long_command(api)
    chat.open(f"{stack.rest_url}/?session={session_id}")
    body = chat.expand_finished(message_id)
    copy_command = chat.shell_row(message_id).get_by_test_id("shell-command-copy")
    copy_output = body.get_by_test_id("shell-output-copy")

    copy_command.focus()
    chat.page.keyboard.press("Enter")
    expect(copy_command).to_have_attribute("data-copied", "true")  # through the selection
    expect(copy_command).to_be_focused()  # was the page's body: a keyboard reader lost their place

    chat.page.keyboard.press("Tab")  # on to the toggle
    expect(copy_command).to_have_text("Copy")  # it kept saying "Copied"
    expect(copy_command).not_to_have_attribute("data-copied", "true")
    copy_output.click()
    expect(copy_output).to_have_attribute("data-copied", "true")
    expect(copy_output).to_be_focused()


def test_the_output_toggle_keeps_its_width_open_or_closed(
        stack: Stack, api: Api, chat: ChatPage) -> None:
    session_id, message_id = long_command(api)
    chat.open(f"{stack.rest_url}/?session={session_id}")
    toggle = chat.toggle(message_id)
    size = toggle.locator(".toggle__size")
    expect(toggle).to_contain_text("Show output")
    closed = place(toggle), place(size)
    chat.expand_finished(message_id)
    expect(toggle).to_contain_text("Hide output")
    assert (place(toggle), place(size)) == closed  # `Hide output` is narrower
    chat.collapse(message_id)
    assert (place(toggle), place(size)) == closed
