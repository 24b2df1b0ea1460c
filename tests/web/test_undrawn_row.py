"""A message whose row cannot be drawn is shown as its plain text (web/row-guard.js, ADR 0124),
and looks it: a note says so in words, a dashed warning edge sets it apart from the drawn
replies, and the text is the message as written (line breaks, indentation and Markdown
markers kept) in monospace, wrapping inside the viewport."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect
from web.chat import ChatPage

from support.acp import agent_text
from support.rest import Api
from support.stack import Stack

pytestmark = [pytest.mark.browser, pytest.mark.slow]

REPLY = "Done:\n    indented **not bold**\n" + "x" * 300


def test_a_row_that_cannot_be_drawn_says_it_is_plain_text(
        stack: Stack, api: Api, chat: ChatPage, viewport: str) -> None:
    session = api.new_session("claude")
    api.start_turn(session["id"])
    drawn_id = api.publish(session["id"], agent_text("A **drawn** reply."))["message"]["id"]
    api.publish(session["id"], {"sessionUpdate": "user_message_chunk",
                                "content": {"type": "text", "text": "next"}})
    undrawn_id = api.publish(session["id"], agent_text(REPLY))["message"]["id"]
    chat.fail_to_draw(undrawn_id)
    chat.open(f"{stack.rest_url}/?session={session['id']}")

    row = chat.page.locator(f'[data-testid=chat-message][data-message-id="{undrawn_id}"]')
    expect(row).to_have_attribute("data-undrawn", "true")
    expect(row.get_by_test_id("undrawn-note")).to_have_text("shown as plain text (it could not be drawn)")
    expect(row.get_by_test_id("undrawn-note")).to_be_visible()
    text = row.get_by_test_id("chat-text")
    assert text.text_content() == REPLY  # as written: nothing parsed, nothing dropped
    expect(text.locator("strong")).to_have_count(0)

    drawn = chat.page.locator(f'[data-testid=chat-message][data-message-id="{drawn_id}"]')
    expect(drawn.locator("strong")).to_have_text("drawn")
    look = """el => { const s = getComputedStyle(el); const t = getComputedStyle(el.querySelector('.bubble__text'));
      return {edge: s.borderTopStyle, colour: s.borderTopColor, font: t.fontFamily, space: t.whiteSpace}; }"""
    undrawn_look = row.locator(".bubble").evaluate(look)
    drawn_look = drawn.locator(".bubble").evaluate(look)
    warn = chat.page.evaluate("getComputedStyle(document.documentElement).getPropertyValue('--warn').trim()")
    assert undrawn_look["edge"] == "dashed" and drawn_look["edge"] == "solid"
    assert undrawn_look["colour"] == chat.page.evaluate(
        "(c) => { const el = document.createElement('i'); el.style.color = c; document.body.append(el);"
        " const rgb = getComputedStyle(el).color; el.remove(); return rgb; }", warn)
    assert "monospace" in undrawn_look["font"] and "monospace" not in drawn_look["font"]
    assert undrawn_look["space"] == "pre-wrap"  # its line breaks and indentation show
    chat.assert_no_horizontal_overflow()  # the 300-character line wraps
    chat.screenshot("undrawn-row")
    chat.expect_undrawn_logged()
