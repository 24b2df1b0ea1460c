"""Launching Debian's Chromium through Playwright, and the two viewports every layout rule is
checked at. Playwright never downloads a browser here: it drives /usr/bin/chromium."""

from __future__ import annotations

import os
from typing import Any

from playwright.sync_api import Browser, BrowserContext, Playwright

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run",
]
VIEWPORTS: dict[str, dict[str, Any]] = {
    "desktop": {"viewport": {"width": 1280, "height": 800}},
    "mobile": {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True,
               "device_scale_factor": 2},
}
TIMEOUT_MS = 10_000


def launch(playwright: Playwright) -> Browser:
    """Chromium with a fresh temporary profile (launch() makes a new user-data-dir)."""
    if not os.path.exists(CHROMIUM):
        raise FileNotFoundError(f"{CHROMIUM} is missing: `make chromium` installs it")
    playwright.selectors.set_test_id_attribute("data-testid")
    return playwright.chromium.launch(executable_path=CHROMIUM, headless=True,
                                      args=CHROMIUM_ARGS)


def new_context(browser: Browser, viewport: str) -> BrowserContext:
    context = browser.new_context(**VIEWPORTS[viewport])
    context.set_default_timeout(TIMEOUT_MS)
    return context
