"""The conformance scenario (tests/clients/scenario.json, described in its README) played by the
TypeScript client (clients/typescript): in Node over gRPC straight to the server, and through
Envoy over gRPC, gRPC-Web and Connect; and once in Chromium, from the page the front door
serves, over gRPC-Web to the page's own origin with the page's Content-Security-Policy. Then
the wrapper's other calls (clients/typescript/test/wrapper.ts) with authentication on, TLS
to a front door with a certificate (clients/typescript/test/tls.ts), the failures of the way to
the service reported as UNAVAILABLE (test/transport-failures.ts), the tokens and timeouts
the client refuses when it is made (test/client-options.ts), the text UTF-8 cannot carry and
the integers their fields cannot carry it refuses before sending (test/text.ts,
test/integers.ts), a Connect message over the front door's 8 MiB it refuses too
(test/message-size.ts), and an idle connection the server closes (test/idle-connection.ts)."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from app.test_tls import certificate
from playwright.sync_api import Browser, Route

from shellexec.app.envoy import IDLE_CONNECTION_TIMEOUT_SECONDS

from support.stack import Stack, running_stack

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "clients" / "typescript"
SCENARIO = Path(__file__).parent / "scenario.json"
RUNNER_TIMEOUT_S = 120
# Where the page loads the browser runner from: a path of the page's own origin that Envoy does
# not serve, so the test's answer for it is the only one.
RUNNER_PATH = "/conformance-runner.js"
# The Node runners of clients/typescript/test that `npm run conformance:build` does not bundle.
OWN_RUNNERS = ("transport-failures", "client-options", "text", "integers", "idle-connection",
               "message-size")


@pytest.fixture(scope="module")
def runners() -> Path:
    """The Node and browser runners, bundled from clients/typescript (its node_modules are
    installed by `make check-generated`, which `make test` runs first)."""
    if not (PACKAGE / "node_modules" / ".bin" / "esbuild").exists():
        pytest.fail("clients/typescript/node_modules is missing: run `make check-generated`")
    subprocess.run(["npm", "run", "--silent", "conformance:build"], cwd=PACKAGE, check=True,
                   timeout=RUNNER_TIMEOUT_S)
    for name in OWN_RUNNERS:
        subprocess.run([PACKAGE / "node_modules" / ".bin" / "esbuild", f"test/{name}.ts",
                        "--bundle", "--platform=node", "--format=esm",
                        f"--outfile=build/{name}-node.mjs", "--log-level=warning"],
                       cwd=PACKAGE, check=True, timeout=RUNNER_TIMEOUT_S)
    return PACKAGE / "build"


@pytest.mark.parametrize(("route", "protocol", "http_version"), [
    ("direct", "grpc", "2"),
    ("envoy", "grpc", "2"),
    ("envoy", "grpc-web", "1.1"),
    ("envoy", "grpc-web", "2"),
    ("envoy", "connect", "1.1"),
])
def test_the_scenario_plays_in_node(stack: Stack, runners: Path, route: str, protocol: str,
                                    http_version: str) -> None:
    port = stack.grpc_port if route == "direct" else stack.rest_port
    result = subprocess.run(
        ["node", str(runners / "conformance-node.mjs"), str(SCENARIO),
         f"http://127.0.0.1:{port}", protocol, http_version],
        capture_output=True, text=True, timeout=RUNNER_TIMEOUT_S)
    assert result.returncode == 0, result.stderr[-4000:]
    assert result.stdout.strip() == "conformance: passed"


@pytest.fixture(scope="module")
def secured(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    with running_stack(tmp_path_factory.mktemp("secured"), SHELLEXEC_AUTH="on") as stack:
        yield stack


@pytest.mark.parametrize(("route", "protocol"), [
    ("direct", "grpc"), ("envoy", "connect"), ("envoy", "grpc-web")])
def test_the_wrapper_s_other_calls_work_with_tokens(secured: Stack, runners: Path, route: str,
                                                     protocol: str) -> None:
    port = secured.grpc_port if route == "direct" else secured.rest_port
    tokens = [secured.create_token(f"ts-{name}-{route}-{protocol}", name)
              for name in ("admin", "read")]
    try:
        result = subprocess.run(
            ["node", str(runners / "wrapper-node.mjs"), str(SCENARIO),
             f"http://127.0.0.1:{port}", protocol, *tokens],
            capture_output=True, text=True, timeout=RUNNER_TIMEOUT_S)
    except subprocess.TimeoutExpired as hung:
        # Its last check leaves a watch loop: a feed left open keeps Node running.
        pytest.fail(f"the wrapper did not exit: {hung.stdout!r}")
    assert result.returncode == 0, result.stderr[-4000:]
    assert result.stdout.strip() == "wrapper: passed"


def test_a_unary_call_whose_stream_was_refused_is_sent_once_more(runners: Path) -> None:
    """Envoy closes a connection idle for 10 s, and a call sent as it closes is refused
    (REFUSED_STREAM): Node's transport said INTERNAL (a probe: up to 23 of 50 clients), where
    Go's and Java's gRPC send it again. The runner's own HTTP/2 server refuses streams on cue."""
    result = subprocess.run(["node", str(runners / "refused-stream-node.mjs")],
                            capture_output=True, text=True, timeout=RUNNER_TIMEOUT_S)
    assert result.returncode == 0, result.stderr[-4000:]
    assert result.stdout.strip() == "refused-stream: passed"


def test_a_failure_of_the_way_to_the_service_is_unavailable(runners: Path) -> None:
    """A stream the server cancels (RST_STREAM CANCEL, as it does while it stops), a
    connection reset or closed at once: Connect said CANCELED, ABORTED or INTERNAL ("write
    EPIPE") where Go, Java and Python say UNAVAILABLE. The caller's own abort stays CANCELED.
    The runner's own servers break the calls on cue."""
    result = subprocess.run(["node", str(runners / "transport-failures-node.mjs")],
                            capture_output=True, text=True, timeout=RUNNER_TIMEOUT_S)
    assert result.returncode == 0, result.stderr[-4000:]
    assert result.stdout.strip() == "transport-failures: passed"


def test_a_token_or_timeout_the_client_cannot_use_is_refused_when_it_is_made(
        runners: Path) -> None:
    """A token with a line feed was trimmed silently, a negative `timeoutMs` taken as no
    deadline and NaN as an immediate one."""
    result = subprocess.run(["node", str(runners / "client-options-node.mjs")],
                            capture_output=True, text=True, timeout=RUNNER_TIMEOUT_S)
    assert result.returncode == 0, result.stderr[-4000:]
    assert result.stdout.strip() == "client-options: passed"


def test_text_utf_8_cannot_carry_is_refused_before_it_is_sent(runners: Path) -> None:
    """A lone surrogate in an update or a string argument was sent as U+FFFD (protobuf's UTF-8
    encoder), and the service stored the text changed, over every protocol; now the call is
    refused before it is sent, naming where the text is and what is wrong."""
    result = subprocess.run(["node", str(runners / "text-node.mjs")],
                            capture_output=True, text=True, timeout=RUNNER_TIMEOUT_S)
    assert result.returncode == 0, result.stderr[-4000:]
    assert result.stdout.strip() == "text: passed"


def test_an_integer_its_field_cannot_carry_is_refused_before_it_is_sent(runners: Path) -> None:
    """A fractional or out-of-int32 `limit` or `sinceRevision`, a fractional or out-of-int64
    `sequence`: Connect failed the call as INTERNAL ("serialize binary: cannot encode field")
    or BigInt threw a RangeError; now the call is refused before it is sent, naming the
    argument."""
    result = subprocess.run(["node", str(runners / "integers-node.mjs")],
                            capture_output=True, text=True, timeout=RUNNER_TIMEOUT_S)
    assert result.returncode == 0, result.stderr[-4000:]
    assert result.stdout.strip() == "integers: passed"


def test_a_connect_message_over_what_the_front_door_takes_is_refused_before_it_is_sent(
        runners: Path) -> None:
    """Node's Connect transport announces no length, so a message over 8 MiB met Envoy's own
    text/plain 413 and Connect said UNKNOWN ("HTTP 413"); now it is RESOURCE_EXHAUSTED before
    anything is sent. gRPC and gRPC-Web still send up to the server's 16 MiB."""
    result = subprocess.run(["node", str(runners / "message-size-node.mjs")],
                            capture_output=True, text=True, timeout=RUNNER_TIMEOUT_S)
    assert result.returncode == 0, result.stderr[-4000:]
    assert result.stdout.strip() == "message-size: passed"


def test_an_idle_connection_the_server_closes_does_not_crash_the_program(
        runners: Path, tmp_path: Path) -> None:
    """The front door sends GOAWAY to a connection idle for IDLE_CONNECTION_TIMEOUT_SECONDS;
    a call made as it arrived left Node an unhandled 'error' event, and the program died
    ("received GOAWAY without any open streams": a probe's poller calling every 10 s). The
    runner's own HTTP/2 servers, plaintext and TLS, send the GOAWAY and the runner makes that
    call at that very moment, so nothing depends on timing; the client must also close an idle
    connection itself, its idle timeout well under the front door's (passed to the runner)."""
    cert, key = certificate(tmp_path)
    front_door_idle_ms = round(IDLE_CONNECTION_TIMEOUT_SECONDS * 1000)
    result = subprocess.run(["node", str(runners / "idle-connection-node.mjs"),
                             str(front_door_idle_ms), str(cert), str(key)],
                            capture_output=True, text=True, timeout=RUNNER_TIMEOUT_S)
    assert result.returncode == 0, result.stderr[-4000:]
    assert result.stdout.strip() == "idle-connection: passed"


def test_the_client_speaks_tls_to_a_front_door_with_a_certificate(runners: Path,
                                                                  tmp_path: Path) -> None:
    """A front door with a self-signed certificate was out of reach: no option took the
    certificate (`[internal] self-signed certificate`), and a hand-made transport lost the
    refused-stream retry. `ca` trusts it alone, over each protocol. Plaintext (`http://`) to
    its TLS port is FAILED_PRECONDITION over each protocol, the front door's own answer."""
    cert, key = certificate(tmp_path)
    with running_stack(tmp_path, SHELLEXEC_AUTH="on", SHELLEXEC_TLS_CERT_FILE=str(cert),
                       SHELLEXEC_TLS_KEY_FILE=str(key)) as secured:
        token = secured.create_token("ts-tls", "admin")
        result = subprocess.run(
            ["node", str(runners / "tls-node.mjs"), f"https://127.0.0.1:{secured.rest_port}",
             token, str(cert), f"https://127.0.0.1:{secured.grpc_port}"],
            capture_output=True, text=True, timeout=RUNNER_TIMEOUT_S)
    assert result.returncode == 0, result.stderr[-4000:]
    assert result.stdout.strip() == "tls: passed"


@pytest.mark.slow
@pytest.mark.browser
def test_the_scenario_plays_in_chromium_from_the_page_origin(
        stack: Stack, runners: Path, browser: Browser) -> None:
    script = (runners / "conformance-browser.js").read_text()

    def serve_runner(route: Route) -> None:
        route.fulfill(status=200, body=script, content_type="text/javascript")

    context = browser.new_context()
    try:
        page = context.new_page()
        page.route(f"{stack.rest_url}{RUNNER_PATH}", serve_runner)
        refused: list[str] = []
        page.on("console", lambda m: refused.append(m.text) if "Refused" in m.text else None)
        calls: list[str] = []
        page.on("request", lambda r: calls.append(r.headers.get("content-type", ""))
                if r.url.startswith(f"{stack.rest_url}/shellexec.v1.") else None)
        page.goto(f"{stack.rest_url}/")
        # The page's own CSP (script-src 'self', connect-src 'self') governs the runner: it is
        # a module script of the page's origin calling that origin. Its calls time out by
        # themselves, so it always reports.
        result = page.evaluate("""([scenario, src]) => new Promise((resolve) => {
            window.conformanceScenario = scenario;
            window.addEventListener("conformance", (event) => resolve(event.detail));
            const runner = document.createElement("script");
            runner.type = "module";
            runner.src = src;
            document.head.append(runner);
        })""", [json.loads(SCENARIO.read_text()), RUNNER_PATH])
        assert result == "passed"
        assert refused == []
        assert calls
        assert all(kind == "application/grpc-web+proto" for kind in calls), set(calls)
    finally:
        context.close()
