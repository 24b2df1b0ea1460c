"""Regenerates the README's screenshots of the chat page (docs/images/*.png).

    PYTHONPATH=tests .venv/bin/python tests/web/make_screenshots.py

Starts a stack of its own on free ports and a temporary database, plays the demo session
(`shellexec.demo`) at full speed through the REST API, and photographs the page in Debian's
Chromium: the desktop overview, the desktop with the failing (coloured) test run expanded, the
390 px mobile viewport with the same output open, and the session index at `/`.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from playwright.sync_api import Page, expect, sync_playwright
from web.browser import launch, new_context
from web.chat import ChatPage

from shellexec.demo.player import Player
from shellexec.demo.script import demo_script

from support.stack import Stack

IMAGES = Path(__file__).resolve().parents[2] / "docs" / "images"
EXPANDED_COMMAND = "pytest tests/integration -x -q"


def play_demo(stack: Stack) -> str:
    player = Player(stack.api, pace=0)
    session_id = player.create("demo", "demo")
    player.play(session_id, demo_script())
    return session_id


def expand(chat: ChatPage, command: str) -> None:
    row = chat.page.locator("[data-testid=shell-row]").filter(
        has=chat.page.get_by_test_id("shell-command").get_by_text(command, exact=True))
    row.get_by_test_id("shell-output-toggle").click()
    body = row.get_by_test_id("shell-output-body")
    expect(body).to_have_attribute("data-poll-state", "done")
    row.evaluate("el => el.scrollIntoView({block: 'center'})")
    chat.pump(300)


def shoot(page: Page, name: str, *, full_page: bool = False) -> Path:
    path = IMAGES / name
    page.screenshot(path=str(path), full_page=full_page, animations="disabled", caret="hide")
    return path


def main() -> int:
    IMAGES.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as workdir:
        stack = Stack(Path(workdir)).start()
        try:
            session_id = play_demo(stack)
            url = f"{stack.rest_url}/?session={session_id}"
            with sync_playwright() as playwright:
                browser = launch(playwright)
                made: list[Path] = []
                for viewport in ("desktop", "mobile"):
                    context = new_context(browser, viewport)
                    chat = ChatPage(context.new_page(), viewport).open(url)
                    if viewport == "desktop":
                        made.append(shoot(chat.page, "web-desktop.png", full_page=True))
                        expand(chat, EXPANDED_COMMAND)
                        made.append(shoot(chat.page, "web-desktop-expanded.png"))
                        chat.page.goto(f"{stack.rest_url}/")
                        expect(chat.page.get_by_test_id("session-index")).to_have_attribute(
                            "data-state", "ready")
                        made.append(shoot(chat.page, "web-index.png"))
                    else:
                        expand(chat, EXPANDED_COMMAND)
                        made.append(shoot(chat.page, "web-mobile.png"))
                    context.close()
                browser.close()
        finally:
            stack.stop()
    for path in made:
        print(path.relative_to(IMAGES.parents[1]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
