"""The conformance scenario (tests/clients/scenario.json, described in its README) played by
the Java client (clients/java), straight to the server and through Envoy; and what the client
reports of failed calls (gRPC code, ErrorInfo reason) and of its bearer token; TLS to a front
door with a certificate, and closing the client with a feed open; the tokens its builder
refuses, its bound on reconnects after an outage, and the text UTF-8 cannot carry that it
refuses before sending.

Maven's wrapper builds the client and its runner once (fetching Maven and the dependencies on
a fresh machine); each case then runs the runner on one address.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from app.test_tls import certificate

from support.stack import Stack, running_stack

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
JAVA_CLIENT = ROOT / "clients" / "java"
SCENARIO = Path(__file__).parent / "scenario.json"
RUNNER = "com.shellexec.conformance.ConformanceRunner"
PROBE = "com.shellexec.conformance.ErrorProbe"
CLIENT_PROBE = "com.shellexec.conformance.ClientProbe"
OPTIONS_PROBE = "com.shellexec.client.OptionsProbe"
TEXT_PROBE = "com.shellexec.client.TextProbe"
# The builder refuses a negative timeout at once; `timeout(null)` was taken, then every call
# failed with a NullPointerException. The probe's client now runs with null: no deadline.
NEGATIVE_TIMEOUT = "negative_timeout timeout: must not be negative, got PT-1S"
# What ErrorProbe prints for each of its steps (docs/api.md, "Error reasons").
PROBE_LINES = [
    "create_session OK",
    "start_turn OK",
    "start_turn_again FAILED_PRECONDITION TURN_ALREADY_RUNNING",
    "publish OK",
    "publish_other_update_same_sequence ALREADY_EXISTS SEQUENCE_CONFLICT",
    "get_unknown_session NOT_FOUND shellexec.v1.Session",
]
CLASSPATH_FILE = JAVA_CLIENT / "target" / "conformance.classpath"
# What OptionsProbe prints: a token no header can carry refused by the builder, in the words of
# the other clients and the bridge, never showing the token (grpc-java dropped the header with a
# warning, and the service answered UNAUTHENTICATED); and the reconnect bound (grpc-java's
# backoff grows to two minutes, and no builder option of grpc-java 1.85 bounds it).
TOKEN_RULE = ": a token is at most 256 visible ASCII characters"
OPTIONS_PROBE_LINES = [
    *(f"refused token {problem}{TOKEN_RULE}" for problem in [
        "ends with a line feed",
        "holds a carriage return (character 21 of 22)",
        "holds a space (character 7 of 27)",
        "ends with a tab",
        "holds a NUL byte (character 21 of 22)",
        "ends with a control character",
        "holds a character outside ASCII (character 21 of 41)",
        "ends with a character outside ASCII",
        "is 257 characters long; the service takes at most 256",
    ]),
    "token_taken 256",
    "token_taken none",
    "reconnect_every PT5S",
    "reconnect_stopped true",
    "reconnect_reset [TRANSIENT_FAILURE]",
    # The shared thread ended once no client was open: Maven's exec:java waited 15 s for it.
    "reconnect_thread_while_open true",
    "reconnect_thread_once_closed false",
]


@pytest.fixture(scope="module")
def classpath() -> str:
    """The compiled client, its runner and their dependencies, built by the Maven wrapper."""
    subprocess.run(
        ["./mvnw", "-q", "-B", "test-compile", "dependency:build-classpath",
         "-Dmdep.includeScope=test", f"-Dmdep.outputFile={CLASSPATH_FILE}"],
        cwd=JAVA_CLIENT, check=True, timeout=600)
    target = JAVA_CLIENT / "target"
    return ":".join((str(target / "classes"), str(target / "test-classes"),
                     CLASSPATH_FILE.read_text().strip()))


@pytest.mark.parametrize("route", ["direct", "envoy"])
def test_the_scenario_plays_as_written(route: str, classpath: str, stack: Stack) -> None:
    address = stack.grpc_target if route == "direct" else f"127.0.0.1:{stack.rest_port}"
    result = subprocess.run(["java", "-cp", classpath, RUNNER, address, str(SCENARIO)],
                            capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stderr[-4000:]
    assert f"passed against {address}" in result.stdout


def _probe(classpath: str, address: str, *token: str) -> list[str]:
    result = subprocess.run(["java", "-cp", classpath, PROBE, address, *token],
                            capture_output=True, text=True, timeout=120, check=True)
    return result.stdout.splitlines()


@pytest.mark.parametrize("route", ["direct", "envoy"])
def test_failures_keep_their_code_and_reason(route: str, classpath: str, stack: Stack) -> None:
    address = stack.grpc_target if route == "direct" else f"127.0.0.1:{stack.rest_port}"
    assert _probe(classpath, address) == PROBE_LINES


def test_the_bearer_token_goes_with_every_call(classpath: str, tmp_path: Path) -> None:
    """Without a token the probe passes null, as `System.getenv` does for an unset variable: it
    threw NullPointerException from `build()`, after the channel was made (and left open)."""
    with running_stack(tmp_path, SHELLEXEC_AUTH="on") as secured:
        token = secured.create_token("java", "admin")
        assert _probe(classpath, secured.grpc_target, token) == PROBE_LINES
        assert _probe(classpath, secured.grpc_target) == [
            "create_session UNAUTHENTICATED TOKEN_MISSING"]


def _client_probe(classpath: str, address: str, token: str, *certificate: str) -> list[str]:
    result = subprocess.run(["java", "-cp", classpath, CLIENT_PROBE, address, token,
                             *certificate],
                            capture_output=True, text=True, timeout=120, check=True)
    return result.stdout.splitlines()


def test_closing_the_client_ends_its_open_feeds(classpath: str, stack: Stack) -> None:
    """A feed left open held the channel's close for its whole 5 s wait, then ended as the
    channel was forced down; closing the client now cancels its feeds first."""
    address = f"127.0.0.1:{stack.rest_port}"
    assert _client_probe(classpath, address, "") == [
        NEGATIVE_TIMEOUT, "feed_after_close CANCELLED"]


def test_the_client_speaks_tls_to_a_front_door_with_a_certificate(
        classpath: str, tmp_path: Path) -> None:
    cert, key = certificate(tmp_path)
    with running_stack(tmp_path, SHELLEXEC_AUTH="on", SHELLEXEC_TLS_CERT_FILE=str(cert),
                       SHELLEXEC_TLS_KEY_FILE=str(key)) as secured:
        token = secured.create_token("java-tls", "admin")
        address = f"127.0.0.1:{secured.rest_port}"
        assert _client_probe(classpath, address, token, str(cert)) == [
            NEGATIVE_TIMEOUT, "tls ses_", "feed_after_close CANCELLED"]


def test_the_builder_refuses_a_token_no_header_can_carry_and_reconnects_are_bounded(
        classpath: str) -> None:
    result = subprocess.run(["java", "-cp", classpath, OPTIONS_PROBE],
                            capture_output=True, text=True, timeout=120, check=True)
    assert result.stdout.splitlines() == OPTIONS_PROBE_LINES
    assert "shx_Secret" not in result.stdout + result.stderr


UTF_8_RULE = "which UTF-8 cannot carry: the service takes UTF-8 text only"


def test_text_utf_8_cannot_carry_is_refused_before_it_is_sent(classpath: str) -> None:
    """A lone surrogate in an update or a string argument was sent as `?` (protobuf's UTF-8
    encoder), and the service stored the text changed; the call is now refused before it is
    sent (the probe's target is never reached: a call sent fails UNAVAILABLE), naming where
    the text is and what is wrong, as the Python client's ValueError does."""
    result = subprocess.run(["java", "-cp", classpath, TEXT_PROBE],
                            capture_output=True, text=True, timeout=120, check=True)
    assert result.stdout.splitlines() == [
        *(f"refused {where} holds a lone surrogate ({found}), {UTF_8_RULE}" for where, found in [
            ("update.content.text", "U+D800 at index 5"),
            ("update.entries[1][0]", "U+DC00 at index 1"),
            ("update", "U+DE00 at index 9"),
            ('a key in update["odd key"]', "U+D800 at index 1"),
            ("updates[1].content.text", "U+D800 at index 0"),
            ("task_id", "U+D800 at index 5"),
            ("output.stdout", "U+DBFF at index 3"),
            ("session_id", "U+D800 at index 4"),
            ("value.content.text[0]", "U+D800 at index 0"),
            ("value.content.text", "U+D800 at index 5"),
        ]),
        "taken [U+1F600, U+0020, U+FFFD]",
        "taken [U+1F600, U+0020, U+FFFD]",
    ]
