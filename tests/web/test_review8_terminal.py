"""Review 8 (attacker's review of the page): hostile terminal output must not hide the output
or freeze the page.

`ansi.js` pads the line with spaces up to any column a `CSI n G` names (`' '.repeat(n)`, so
`ESC[999999999G` throws and nothing of the output is drawn), and rebuilds the whole line at
every write after a carriage return (a line of many styled runs, rewritten many times, keeps
the page busy for tens of seconds)."""

from __future__ import annotations

import time

import pytest
from playwright.sync_api import expect
from web.chat import ChatPage

from support.acp import codex_end, codex_start
from support.rest import Api, unique
from support.stack import Stack

pytestmark = [pytest.mark.browser, pytest.mark.slow]

E = "\x1b"
# A linear screen draws this in milliseconds; the current one needs about half a minute.
DRAW_SECONDS = 10


def finished_command(api: Api, output: str) -> tuple[str, str]:
    session = api.new_session("codex")
    api.start_turn(session["id"])
    call = unique("call")
    message_id = api.play(session["id"], [codex_start(call, "make"), codex_end(call, output, 0)])
    return session["id"], message_id


def test_a_far_column_does_not_hide_the_whole_output(
        stack: Stack, api: Api, chat: ChatPage) -> None:
    output = f"first line of the build\nsecond line\n{E}[999999999Gx\n"
    session_id, message_id = finished_command(api, output)
    chat.open(f"{stack.rest_url}/?session={session_id}")
    body = chat.expand(message_id)
    expect(body).to_have_attribute("data-poll-state", "done")

    stdout = body.get_by_test_id("shell-output-stdout")
    expect(stdout).to_contain_text("first line of the build")
    expect(stdout).to_contain_text("second line")


def test_carriage_returns_over_a_colourful_line_do_not_freeze_the_page(
        stack: Stack, api: Api, chat: ChatPage) -> None:
    # One line of 12,000 styled runs, then 40,000 `\r` rewrites of its first column (150 KB).
    colourful = "".join(f"{E}[3{i % 2}ma" for i in range(12_000))
    output = colourful + "\rb" * 40_000 + f"{E}[0m\ndone\n"
    session_id, message_id = finished_command(api, output)
    chat.open(f"{stack.rest_url}/?session={session_id}")

    started = time.monotonic()
    body = chat.expand(message_id)
    expect(body).to_have_attribute("data-state", "ready", timeout=8 * DRAW_SECONDS * 1000)
    took = time.monotonic() - started

    assert took < DRAW_SECONDS, f"the page was busy for {took:.0f} s drawing one output"
    expect(body.get_by_test_id("shell-output-stdout")).to_contain_text("done")
