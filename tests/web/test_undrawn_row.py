"""A message whose row cannot be drawn is shown as its plain text (web/row-guard.js, ADR 0124),
and looks it: a note says so in words, a dashed warning edge sets it apart from the drawn
replies, and the text is the message as written (line breaks, indentation and Markdown
markers kept) in monospace, wrapping inside the viewport."""

from __future__ import annotations

import pytest
from playwright.sync_api import Locator, expect
from web.chat import ChatPage

from support.acp import agent_text
from support.rest import Api
from support.stack import Stack

pytestmark = [pytest.mark.browser, pytest.mark.slow]

REPLY = "Done:\n    indented **not bold**\n" + "x" * 300
NOTE = "shown as plain text (it could not be drawn)"

LOOK = """el => {
  const bubble = getComputedStyle(el);
  const text = getComputedStyle(el.querySelector('.bubble__text'));
  return {edge: bubble.borderTopStyle, colour: bubble.borderTopColor,
          font: text.fontFamily, space: text.whiteSpace};
}"""
# The page's --warn colour, resolved the way the browser reports a border colour.
WARN = """() => {
  const probe = document.createElement('i');
  probe.style.color = 'var(--warn)';
  document.body.append(probe);
  const colour = getComputedStyle(probe).color;
  probe.remove();
  return colour;
}"""


def message_row(chat: ChatPage, message_id: str) -> Locator:
    return chat.page.locator(f'[data-testid=chat-message][data-message-id="{message_id}"]')


def test_a_row_that_cannot_be_drawn_says_it_is_plain_text(
        stack: Stack, api: Api, chat: ChatPage, viewport: str) -> None:
    sid = api.new_session("claude")["id"]
    api.start_turn(sid)
    drawn_id = api.publish(sid, agent_text("A **drawn** reply."))["message"]["id"]
    api.publish(sid, {"sessionUpdate": "user_message_chunk",
                      "content": {"type": "text", "text": "next"}})
    undrawn_id = api.publish(sid, agent_text(REPLY))["message"]["id"]
    chat.fail_to_draw(undrawn_id)
    chat.open(f"{stack.rest_url}/?session={sid}")

    row = message_row(chat, undrawn_id)
    expect(row).to_have_attribute("data-undrawn", "true")
    expect(row.get_by_test_id("undrawn-note")).to_have_text(NOTE)
    expect(row.get_by_test_id("undrawn-note")).to_be_visible()
    text = row.get_by_test_id("chat-text")
    assert text.text_content() == REPLY  # as written: nothing parsed, nothing dropped
    expect(text.locator("strong")).to_have_count(0)

    drawn = message_row(chat, drawn_id)
    expect(drawn.locator("strong")).to_have_text("drawn")
    undrawn_look = row.locator(".bubble").evaluate(LOOK)
    drawn_look = drawn.locator(".bubble").evaluate(LOOK)
    assert undrawn_look["edge"] == "dashed"
    assert drawn_look["edge"] == "solid"
    assert undrawn_look["colour"] == chat.page.evaluate(WARN)
    assert "monospace" in undrawn_look["font"]
    assert "monospace" not in drawn_look["font"]
    assert undrawn_look["space"] == "pre-wrap"  # its line breaks and indentation show
    chat.assert_no_horizontal_overflow()  # the 300-character line wraps
    chat.screenshot("undrawn-row")
    chat.expect_undrawn_logged()
