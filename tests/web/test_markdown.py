"""Agent replies as Markdown in Chromium (issue 14 "Chat"): ordinary Markdown renders, hostile
input renders nothing active, and the user's prompt stays plain text."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect
from web.chat import ChatPage, user_text

from support.acp import agent_text
from support.rest import Api
from support.stack import Stack

pytestmark = [pytest.mark.browser, pytest.mark.slow]

REPLY = """### What I changed

I fixed the **parser** and the *tokenizer*, see `parse()` in [the docs](https://example.com/docs).

1. ran the tests
2. fixed `test_parse`

- one
- two
  - nested

```python
def parse(text: str) -> list[str]:
    return text.split()
```

| file | change |
|:--|--:|
| `parse.py` | +12 |

> all green now
"""

HOSTILE = """<script>window.__mdInjected = 1</script>
<img src="/favicon.svg" onerror="window.__mdInjected = 2" onload="window.__mdInjected = 3">

[click me](javascript:window.__mdInjected=4) [data](data:text/html,<script>alert(1)</script>)
[spaced](  java\tscript:window.__mdInjected=5 ) <a href="javascript:window.__mdInjected=6">raw</a>
![pic](/favicon.svg) <iframe src="/"></iframe> <style>body{display:none}</style>
[ok](https://example.com/safe)
"""


def test_agent_markdown_renders_and_the_prompt_stays_plain(
        stack: Stack, api: Api, chat: ChatPage, viewport: str) -> None:
    session = api.new_session("claude")
    api.start_turn(session["id"])
    api.publish(session["id"], user_text("please **fix** the `parser`"))
    api.publish(session["id"], agent_text(REPLY))
    chat.open(f"{stack.rest_url}/?session={session['id']}")

    user = chat.page.locator("[data-testid=chat-message][data-author=user]")
    expect(user.get_by_test_id("chat-text")).to_have_text("please **fix** the `parser`")
    assert user.locator("strong, code").count() == 0

    agent = chat.page.locator("[data-testid=chat-message][data-author=agent]")
    reply = agent.get_by_test_id("chat-text")
    expect(reply).to_have_attribute("data-format", "markdown")
    expect(reply.locator("h5")).to_have_text("What I changed")  # under the page's own headings
    expect(reply.locator("strong")).to_have_text("parser")
    expect(reply.locator("em")).to_have_text("tokenizer")
    expect(reply.locator("p code").first).to_have_text("parse()")
    expect(reply.locator("ol > li")).to_have_count(2)
    expect(reply.locator("ul > li")).to_have_count(3)  # two items and one nested
    expect(reply.locator("pre code")).to_have_text(
        "def parse(text: str) -> list[str]:\n    return text.split()")
    expect(reply.locator("table th")).to_have_text(["file", "change"])
    expect(reply.locator("table td.align-right")).to_have_text("+12")
    expect(reply.locator("blockquote")).to_have_text("all green now")
    link = reply.locator("a")
    expect(link).to_have_text("the docs")
    expect(link).to_have_attribute("href", "https://example.com/docs")
    expect(link).to_have_attribute("rel", "noopener noreferrer")
    expect(link).to_have_attribute("target", "_blank")
    chat.assert_no_horizontal_overflow()
    chat.screenshot("markdown-reply")


def test_hostile_markdown_renders_nothing_active(
        stack: Stack, api: Api, chat: ChatPage) -> None:
    session = api.new_session("claude")
    api.start_turn(session["id"])
    api.publish(session["id"], user_text("<b>not bold</b>"))
    api.publish(session["id"], agent_text(HOSTILE))
    chat.open(f"{stack.rest_url}/?session={session['id']}")
    chat.pump(300)  # an injected image or script would have loaded or run by now

    list_ = chat.page.get_by_test_id("message-list")
    assert list_.locator("script, img, iframe, style, b, object, embed, form").count() == 0
    anchors = list_.locator("a")
    assert anchors.evaluate_all("els => els.map(a => a.getAttribute('href'))") == [
        "https://example.com/safe"]
    handlers = list_.evaluate("""el => [...el.querySelectorAll('*')].flatMap(n =>
        [...n.attributes].map(a => a.name)).filter(n => n.startsWith('on') || n === 'style')""")
    assert handlers == []
    assert chat.page.evaluate("window.__mdInjected") is None
    reply = chat.page.locator("[data-testid=chat-message][data-author=agent]")
    expect(reply).to_contain_text("<script>window.__mdInjected = 1</script>")  # shown, as text
    expect(reply).to_contain_text("click me")
    chat.screenshot("markdown-hostile")
