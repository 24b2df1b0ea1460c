"""What the browser tests share: publishing through the REST API, and a driver for the chat
page that counts and times the shell-output requests the page makes.

Requests are counted twice: with Playwright's `page.on("request")` (what went on the wire) and
by a small init script (`instrument.js`) that records, in page time, when each shell-output
fetch started and settled, how many were in flight at once, and every API body and feed event
the page received.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from playwright.sync_api import ConsoleMessage, Error, Locator, Page, Request, expect

from shellexec.vocabulary import TERMINAL_STATUSES

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"
INSTRUMENT = Path(__file__).with_name("instrument.js")
SHELL_OUTPUT = re.compile(r"/api/v1/task-sessions/[^/]+/messages/([^/]+)/shell-output$")

Update = dict[str, Any]
Json = dict[str, Any]


# ---- ACP updates the builders in support.acp do not cover ---------------------------------

def user_text(text: str) -> Update:
    return {"sessionUpdate": "user_message_chunk", "content": {"type": "text", "text": text}}


def generic_start(call_id: str, command: str, work_dir: str | None = "/home/dev/proj") -> Update:
    raw: Json = {"command": command}
    if work_dir is not None:
        raw["cwd"] = work_dir
    return {"sessionUpdate": "tool_call", "toolCallId": call_id, "kind": "execute",
            "title": command, "status": "in_progress", "rawInput": raw}


def generic_end(call_id: str, status: str, raw_output: Any = None) -> Update:
    update: Update = {"sessionUpdate": "tool_call_update", "toolCallId": call_id,
                      "status": status}
    if raw_output is not None:
        update["rawOutput"] = raw_output
    return update


def codex_delta(call_id: str, data: str) -> Update:
    """A TypeScript codex-acp live chunk (always appended)."""
    return {"sessionUpdate": "tool_call_update", "toolCallId": call_id,
            "_meta": {"terminal_output_delta": {"terminal_id": call_id, "data": data}}}


def opencode_pending(call_id: str) -> Update:
    return {"sessionUpdate": "tool_call", "toolCallId": call_id, "title": "bash",
            "kind": "execute", "status": "pending", "locations": [{"path": "/home/dev/proj"}],
            "rawInput": {"cwd": "/home/dev/proj"}}


def opencode_start(call_id: str, command: str) -> Update:
    return {"sessionUpdate": "tool_call_update", "toolCallId": call_id, "status": "in_progress",
            "kind": "execute", "title": command, "locations": [{"path": "/home/dev/proj"}],
            "rawInput": {"command": command, "cwd": "/home/dev/proj"}}


def opencode_end(call_id: str, command: str, output: str, exit_code: int) -> Update:
    """OpenCode reports ACP `completed` even when the command exits nonzero."""
    return {"sessionUpdate": "tool_call_update", "toolCallId": call_id, "status": "completed",
            "title": command,
            "content": [{"type": "content", "content": {"type": "text", "text": output}}],
            "rawOutput": {"output": output, "metadata": {"output": output, "exit": exit_code,
                                                         "truncated": False}}}



# ---- the page ------------------------------------------------------------------------------

# Makes one message's row throw while it is drawn. No message the server accepts is known to
# (ADR 0124 bounded the renderer), so the page's own `setAttribute` fails where a row sets
# `data-message-id` to that id: it stands for any bug a row may hit, and leaves the row guard,
# the plain-text row and its style as they are.
FAIL_TO_DRAW = """(messageId) => {
  const real = Element.prototype.setAttribute;
  Element.prototype.setAttribute = function (name, value) {
    if (name === 'data-message-id' && value === messageId) {
      throw new RangeError('injected: no drawing this row');
    }
    return real.call(this, name, value);
  };
}"""
UNDRAWN_LOG = "could not be drawn: shown as plain text"


@dataclass
class ShellFetch:
    url: str
    start: float  # page time, ms
    end: float | None
    outcome: str | None  # the HTTP status, or the error name (AbortError, TypeError...)
    shell_output_status: str | None  # the `status` of the shell output it returned


@dataclass
class ChatPage:
    """One browser tab on the chat page, with everything it requested recorded."""

    page: Page
    name: str
    touch: bool = False  # tap instead of click (the mobile viewport)
    requests: list[Request] = field(default_factory=list)

    errors: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.page.add_init_script(path=str(INSTRUMENT))
        self.page.on("request", self._record)
        self.page.on("pageerror", self._page_error)
        self.page.on("console", self._console)

    def _record(self, request: Request) -> None:
        self.requests.append(request)

    def _page_error(self, error: Error) -> None:
        self.errors.append(f"uncaught: {error.message}")

    def _console(self, message: ConsoleMessage) -> None:
        # A failed HTTP request is logged by Chromium itself; the tests that cause one on
        # purpose assert what the page shows instead.
        if message.type == "error" and not message.text.startswith("Failed to load resource"):
            self.errors.append(f"console: {message.text}")

    # -- navigation
    def open(self, url: str, *, live: bool = True) -> ChatPage:
        """Loads the page and waits for the initial messages (and the live feed)."""
        self.page.goto(url)
        expect(self.page.get_by_test_id("message-list")).to_have_attribute("data-loaded", "true")
        if live:
            expect(self.page.get_by_test_id("feed-status")).to_have_attribute("data-state", "live")
        return self

    # -- rows
    def fail_to_draw(self, message_id: str) -> None:
        """From the next page load on, drawing the row of `message_id` throws (FAIL_TO_DRAW)."""
        self.page.add_init_script(script=f"({FAIL_TO_DRAW})({json.dumps(message_id)})")

    def expect_undrawn_logged(self) -> None:
        """The page logged that a row fell back to plain text: expected, so not an error."""
        logged = [error for error in self.errors if UNDRAWN_LOG in error]
        assert logged, f"no {UNDRAWN_LOG!r} in {self.errors}"
        self.errors = [error for error in self.errors if error not in logged]

    def shell_row(self, message_id: str) -> Locator:
        return self.page.locator(f'[data-testid=shell-row][data-message-id="{message_id}"]')

    def body(self, message_id: str) -> Locator:
        return self.shell_row(message_id).get_by_test_id("shell-output-body")

    def toggle(self, message_id: str) -> Locator:
        return self.shell_row(message_id).get_by_test_id("shell-output-toggle")

    def expand(self, message_id: str) -> Locator:
        toggle = self.toggle(message_id)
        expect(toggle).to_have_attribute("aria-expanded", "false")
        self.press(toggle)
        expect(toggle).to_have_attribute("aria-expanded", "true")
        return self.body(message_id)

    def expand_finished(self, message_id: str) -> Locator:
        """Expands the output of a command that has ended: its body once the last poll is
        done (no more output is coming)."""
        body = self.expand(message_id)
        expect(body).to_have_attribute("data-poll-state", "done")
        return body

    def collapse(self, message_id: str) -> None:
        toggle = self.toggle(message_id)
        expect(toggle).to_have_attribute("aria-expanded", "true")
        self.press(toggle)
        expect(self.body(message_id)).to_have_count(0)

    def press(self, target: Locator) -> None:
        if self.touch:
            target.tap()
        else:
            target.click()

    def copied(self, button: Locator) -> str:
        """What the clipboard holds once a click on a copy `button` has copied (the page may
        use the clipboard)."""
        button.click()
        expect(button).to_have_attribute("data-copied", "true")
        return str(self.page.evaluate("navigator.clipboard.readText()"))

    # -- what the page requested
    def shell_requests(self, message_id: str | None = None) -> list[Request]:
        """Shell-output requests seen on the wire (Playwright `request` events)."""
        self.pump()
        return [r for r in self.requests if is_shell_output(r.url, message_id)]

    def shell_fetches(self, message_id: str | None = None) -> list[ShellFetch]:
        """Shell-output fetches as the page made them, with page-time start and settle."""
        raw: list[Json] = self.page.evaluate("window.__shellexecTest.shellFetches")
        fetches = [ShellFetch(f["url"], f["start"], f["end"], f["outcome"], f["shellOutputStatus"])
                   for f in raw]
        return [f for f in fetches if is_shell_output(f.url, message_id)]

    def max_in_flight(self) -> int:
        return int(self.page.evaluate("window.__shellexecTest.maxInFlight"))

    def now(self) -> float:
        """Page time (performance.now(), ms)."""
        return float(self.page.evaluate("performance.now()"))

    def api_bodies(self) -> list[tuple[str, Any]]:
        """(url, parsed JSON) of every non-output API response the page read."""
        raw: list[Json] = self.page.evaluate("window.__shellexecTest.apiBodies")
        return [(b["url"], json.loads(b["text"])) for b in raw]

    def feed_events(self) -> list[tuple[Json, float]]:
        """(event, page time it arrived) of every feed event, before the page handled it."""
        raw: list[Json] = self.page.evaluate("window.__shellexecTest.feedData")
        return [(json.loads(item["data"]), float(item["at"])) for item in raw]

    def terminal_event_at(self, message_id: str) -> float:
        """When the first feed event reporting `message_id` terminal reached the page."""
        for event, at in self.feed_events():
            message = event.get("message") or {}
            status = (message.get("metadata") or {}).get("status")
            if message.get("id") == message_id and status in TERMINAL_STATUSES:
                return at
        raise AssertionError(f"no terminal feed event for {message_id}")

    def feed_urls(self) -> list[str]:
        urls: list[str] = self.page.evaluate("window.__shellexecTest.feedUrls")
        return urls

    def pump(self, ms: float = 0) -> None:
        """Lets the page run for `ms` while Playwright delivers its events to Python."""
        self.page.wait_for_timeout(ms)

    # -- layout
    def assert_no_horizontal_overflow(self) -> None:
        widths: Json = self.page.evaluate(
            "({scroll: document.documentElement.scrollWidth, inner: window.innerWidth,"
            " body: document.body.scrollWidth})")
        assert widths["scroll"] <= widths["inner"], widths
        assert widths["body"] <= widths["inner"], widths

    def box(self, locator: Locator) -> Json:
        box = locator.bounding_box()
        assert box is not None, f"{locator} is not visible"
        return dict(box)

    def screenshot(self, label: str) -> Path:
        ARTIFACTS.mkdir(exist_ok=True)
        safe = re.sub(r"[^A-Za-z0-9_.-]+", "-", f"{self.name}-{label}").strip("-")
        path = ARTIFACTS / f"{safe}.png"
        self.page.screenshot(path=str(path), full_page=True)
        return path


def is_shell_output(url: str, message_id: str | None = None) -> bool:
    """Whether `url` is the shell-output route (of `message_id` when given)."""
    match = SHELL_OUTPUT.search(url.split("?", 1)[0])
    return match is not None and (message_id is None or match.group(1) == message_id)


def walk_keys(value: Any) -> Iterator[str]:
    """Every object key anywhere in a JSON value."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield str(key)
            yield from walk_keys(item)
    elif isinstance(value, list):
        for item in value:
            yield from walk_keys(item)
