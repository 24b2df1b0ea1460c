"""A long session opens as fast as a short one (issue 14 "Long sessions"): in Chromium, the
time from navigation to the first rendered command for a session of 10,000 messages (5,000
commands) against one of 100 messages (target: at most 1.5x), and for the long one the DOM
nodes and JS heap at first screen, after scrolling to the top, and after 1,000 live appends
(target: under 5,000 DOM nodes each time).

Loads of the two sessions alternate in rounds; the times are medians."""

from __future__ import annotations

import statistics
from typing import Any

from playwright.sync_api import Page, sync_playwright
from web.browser import CHROMIUM, CHROMIUM_ARGS, TIMEOUT_MS, new_context

from shellexec.client import ShellExecClient

from _service import conclude, running_stack

ROUNDS = 5
TARGET = 1.5
MAX_NODES = 5000
LIVE_APPENDS = 1000

# Records, in page time, when the first shell row is in the DOM.
FIRST_COMMAND = """
new MutationObserver((_, observer) => {
  if (document.querySelector('[data-testid=shell-row]')) {
    window.__firstCommandAt = performance.now();
    observer.disconnect();
  }
}).observe(document, {childList: true, subtree: true});
"""
MEASURE = """() => { if (window.gc) window.gc();
  return {nodes: document.getElementsByTagName('*').length,
          heap_mb: performance.memory.usedJSHeapSize / 1048576}; }"""


def seed(client: ShellExecClient, task_id: str, messages: int) -> str:
    """A session of `messages` messages: agent text and a finished command, in turns."""
    session_id = client.create_session(task_id, "codex").id
    turn = client.start_turn(session_id).id
    for index in range(messages // 2):
        client.publish(session_id, {"sessionUpdate": "agent_message_chunk",
                                    "content": {"type": "text", "text": f"Step {index}: run it."}})
        call = f"call-{index}"
        client.publish(session_id, {
            "sessionUpdate": "tool_call", "toolCallId": call, "kind": "execute",
            "title": f"pytest -q tests/test_{index}.py",
            "rawInput": {"command": f"pytest -q tests/test_{index}.py"}})
        client.publish(session_id, {
            "sessionUpdate": "tool_call_update", "toolCallId": call, "status": "completed",
            "rawOutput": {"formatted_output": f"{index} passed\n", "exit_code": 0}})
    client.complete_turn(session_id, turn)
    total = client.list_messages(session_id, limit=1).total
    assert total == messages, (total, messages)
    return session_id


def first_command_ms(page: Page, url: str) -> float:
    page.goto(url)
    page.wait_for_function("() => window.__firstCommandAt !== undefined")
    return float(page.evaluate("window.__firstCommandAt"))


def scroll_to_top(page: Page) -> None:
    page.wait_for_selector("[data-testid=message-list][data-loaded=true]")
    for _ in range(5000):
        done = page.evaluate("""() => {
          const list = document.querySelector('[data-testid=message-list]');
          window.scrollTo(0, 0);
          return list.dataset.hasOlder === 'false' && window.scrollY === 0; }""")
        if done:
            return
        page.wait_for_timeout(30)
    raise AssertionError("never reached the oldest message")


def main() -> None:
    figures: dict[str, Any] = {}
    with running_stack() as stack, stack.client() as client, sync_playwright() as playwright:
        short = seed(client, "bench-page-short", 100)
        long = seed(client, "bench-page-long", 10_000)
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True,
            args=[*CHROMIUM_ARGS, "--enable-precise-memory-info", "--js-flags=--expose-gc"])
        playwright.selectors.set_test_id_attribute("data-testid")
        context = new_context(browser, "desktop")
        context.set_default_timeout(TIMEOUT_MS * 6)
        context.add_init_script(FIRST_COMMAND)
        page = context.new_page()
        short_ms, long_ms = [], []
        for _ in range(ROUNDS):
            short_ms.append(first_command_ms(page, f"{stack.rest_url}/sessions/{short}"))
            long_ms.append(first_command_ms(page, f"{stack.rest_url}/sessions/{long}"))

        first_command_ms(page, f"{stack.rest_url}/sessions/{long}")
        page.wait_for_selector("[data-testid=feed-status][data-state=live]")
        at_first = page.evaluate(MEASURE)
        for index in range(LIVE_APPENDS):
            client.publish(long, {"sessionUpdate": "tool_call", "toolCallId": f"live-{index}",
                                  "kind": "execute", "title": f"echo live {index}",
                                  "rawInput": {"command": f"echo live {index}"}})
        page.wait_for_selector(f"text=echo live {LIVE_APPENDS - 1}")
        after_appends = page.evaluate(MEASURE)
        scroll_to_top(page)
        at_top = page.evaluate(MEASURE)
        browser.close()
    short_median, long_median = statistics.median(short_ms), statistics.median(long_ms)
    ratio = long_median / short_median
    figures = {"short_100_ms": short_median, "long_10k_ms": long_median,
               "nodes_first": at_first["nodes"], "nodes_top": at_top["nodes"],
               "nodes_after_appends": after_appends["nodes"],
               "heap_first_mb": at_first["heap_mb"], "heap_top_mb": at_top["heap_mb"],
               "heap_after_appends_mb": after_appends["heap_mb"]}
    bounded = all(figures[k] < MAX_NODES for k in ("nodes_first", "nodes_top",
                                                   "nodes_after_appends"))
    conclude("page long session (first command, 10,000 vs 100 messages, Chromium; DOM nodes)",
             f"first command: 100 messages {short_median:.0f} ms, 10,000 messages "
             f"{long_median:.0f} ms; nodes {at_first['nodes']}/{at_top['nodes']}/"
             f"{after_appends['nodes']} (first/top/after {LIVE_APPENDS} appends)",
             figures, ratio, f"<= {TARGET:g}, nodes < {MAX_NODES}", ratio <= TARGET and bounded)


if __name__ == "__main__":
    main()
