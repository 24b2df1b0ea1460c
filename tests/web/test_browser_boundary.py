"""The browser boundary in a real Chromium (docs/security.md, "The browser boundary"): the page
runs under its Content-Security-Policy without a violation and the policy is enforced; a
DNS-rebinding page and a cross-site form POST from another site get nothing."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Route, expect
from web.browser import CHROMIUM, CHROMIUM_ARGS, new_context
from web.chat import ChatPage, generic_start, user_text

from shellexec.app.browser_boundary import CONTENT_SECURITY_POLICY

from support.rest import Api, unique
from support.stack import Stack

pytestmark = [pytest.mark.browser, pytest.mark.slow]

REBOUND = "rebound.example"
ATTACKER = "http://attacker.example/"
# Records every CSP violation the page reports, from before its first script runs.
VIOLATIONS = """
window.__violations = [];
document.addEventListener('securitypolicyviolation',
  (event) => window.__violations.push(`${event.violatedDirective} ${event.blockedURI}`));
"""


@pytest.fixture
def rebinding_browser(browser: Browser) -> Iterator[Browser]:
    """A second Chromium whose resolver sends `rebound.example` to 127.0.0.1, as a
    DNS-rebinding attacker's name resolves once its page is loaded."""
    rebinding = browser.browser_type.launch(
        executable_path=CHROMIUM, headless=True,
        args=[*CHROMIUM_ARGS, f"--host-resolver-rules=MAP {REBOUND} 127.0.0.1"])
    yield rebinding
    rebinding.close()


def test_the_page_runs_under_its_policy_and_the_policy_is_enforced(
        stack: Stack, api: Api, browser: Browser) -> None:
    session = api.new_session("codex")
    api.publish(session["id"], user_text("<b>markup stays text</b>"))
    api.play(session["id"], [generic_start(unique("call"), "ls -la")])
    context = new_context(browser, "desktop")
    try:
        page = context.new_page()
        page.add_init_script(script=VIOLATIONS)
        chat = ChatPage(page, "csp")
        response = page.goto(f"{stack.rest_url}/?session={session['id']}")
        assert response is not None
        assert response.headers["content-security-policy"] == CONTENT_SECURITY_POLICY
        expect(page.get_by_test_id("message-list")).to_have_attribute("data-loaded", "true")
        expect(page.get_by_test_id("feed-status")).to_have_attribute("data-state", "live")
        expect(page.get_by_text("<b>markup stays text</b>")).to_be_visible()
        assert page.evaluate("window.__violations") == []
        assert chat.errors == []
        # An injected inline script is refused: the policy is in force, not only sent.
        page.evaluate("""() => { const s = document.createElement('script');
                                 s.textContent = 'window.__inline = true';
                                 document.head.append(s); }""")
        assert page.evaluate("window.__inline === undefined")
        assert any(v.startswith("script-src") for v in page.evaluate("window.__violations"))
    finally:
        context.close()


def test_a_dns_rebinding_page_gets_nothing(stack: Stack, api: Api,
                                           rebinding_browser: Browser) -> None:
    session = api.new_session()
    page = rebinding_browser.new_page()
    response = page.goto(f"http://{REBOUND}:{stack.rest_port}/?session={session['id']}")
    assert response is not None
    assert response.status == 421
    read = page.evaluate(
        "async (path) => { const r = await fetch(path); return [r.status, await r.text()]; }",
        f"/api/v1/task-sessions/{session['id']}")
    assert read[0] == 421
    assert session["id"] not in read[1]


def test_a_cross_site_form_post_creates_nothing(stack: Stack, api: Api,
                                                browser: Browser) -> None:
    """The classic JSON CSRF: a text/plain form whose one field spells a JSON body."""
    task_id = unique("csrf")
    field_name = json.dumps({"task_id": task_id, "agent": ""})[:-2]
    attacker_page = f"""<!doctype html><form method="post" enctype="text/plain"
        action="{stack.rest_url}/api/v1/task-sessions">
        <input name='{field_name}' value='x"}}'></form>
        <script>document.forms[0].submit()</script>"""
    context = new_context(browser, "desktop")
    try:
        page = context.new_page()

        def serve_attacker(route: Route) -> None:
            route.fulfill(status=200, content_type="text/html", body=attacker_page)

        page.route(ATTACKER, serve_attacker)
        with page.expect_navigation(url=f"{stack.rest_url}/api/v1/task-sessions") as posted:
            page.goto(ATTACKER)
        response = posted.value
        assert response is not None
        assert response.status == 403
        assert response.request.headers.get("origin") == ATTACKER.rstrip("/")
    finally:
        context.close()
    assert api.request("GET", f"/api/v1/tasks/{task_id}/boot-state").status == 404
