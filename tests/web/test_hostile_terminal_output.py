"""Hostile terminal output through the page: an escape sequence naming a column far past any
terminal's width neither hides the output nor breaks copying it (the cursor stops at the right
margin, `MAX_COLUMN` in web/ansi.js, ADR 0125).

What each hostile sequence costs (carriage returns over a line of many colours, repeated
erasures, far columns) is bounded in the parser's unit tests, web/test/ansi.test.mjs."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect
from web.chat import ChatPage, codex_delta

from support.acp import codex_end, codex_start
from support.rest import Api, unique
from support.stack import Stack

pytestmark = [pytest.mark.browser, pytest.mark.slow]

E = "\x1b"
MAX_COLUMN = 1024  # web/ansi.js


def finished_command(api: Api, output: str) -> tuple[str, str]:
    session = api.new_session("codex")
    api.start_turn(session["id"])
    call = unique("call")
    message_id = api.play(session["id"], [codex_start(call, "make"), codex_end(call, output, 0)])
    return session["id"], message_id


def test_a_far_column_neither_hides_the_output_nor_breaks_copying_it(
        stack: Stack, api: Api, chat: ChatPage) -> None:
    output = f"first line of the build\nsecond line\n{E}[999999999Gx\n"
    shown = f"first line of the build\nsecond line\n{' ' * MAX_COLUMN}x\n"
    session_id, message_id = finished_command(api, output)
    chat.open(f"{stack.rest_url}/?session={session_id}")
    body = chat.expand_finished(message_id)

    stdout = body.get_by_test_id("shell-output-stdout")
    expect(stdout).to_contain_text("first line of the build")
    assert stdout.text_content() == shown

    chat.page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    assert chat.copied(body.get_by_test_id("shell-output-copy")) == shown


def test_an_osc_string_never_terminated_hides_only_the_rest_of_its_line(
        stack: Stack, api: Api, chat: ChatPage) -> None:
    # It hid all the output after it, lines printed later included.
    session = api.new_session("codex")
    api.start_turn(session["id"])
    call = unique("call")
    message_id = api.play(session["id"], [
        codex_start(call, "make"),
        codex_delta(call, f"step 1\n{E}]0;a title never ended\nstep 2\n")])
    chat.open(f"{stack.rest_url}/?session={session['id']}")
    body = chat.expand(message_id)
    stdout = body.get_by_test_id("shell-output-stdout")
    expect(stdout).to_have_text("step 1\n\nstep 2\n")

    api.publish(session["id"], codex_delta(call, "step 3, printed later\n"))
    expect(stdout).to_have_text("step 1\n\nstep 2\nstep 3, printed later\n")
    assert stdout.text_content() == "step 1\n\nstep 2\nstep 3, printed later\n"
