"""The server's Prometheus metrics on their own loopback port (SHELLEXEC_METRICS_PORT): what
they count after real calls through Envoy, and that the public listener does not serve them."""

from __future__ import annotations

import contextlib
import itertools
import json
import socket
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

import grpc
import pytest

from shellexec.app.metrics_endpoint import MAX_CONNECTIONS
from shellexec.vocabulary import EVENT_HEARTBEAT, EVENT_MESSAGE_ADDED

from support.acp import codex_start
from support.metrics import Samples, metrics_url, scrape, value
from support.processes import wait_until
from support.rest import unique
from support.stack import Stack, free_port, running_stack

SERVICE = "/shellexec.v1.ShellExecService"


@pytest.fixture(scope="module")
def metered(tmp_path_factory: pytest.TempPathFactory,
            new_database: Callable[[], dict[str, str]]) -> Iterator[Stack]:
    with running_stack(tmp_path_factory.mktemp("metered"),
                       SHELLEXEC_METRICS_PORT=str(free_port()), **new_database()) as running:
        yield running


def status_of(url: str, method: str = "GET") -> int:
    try:
        with urllib.request.urlopen(urllib.request.Request(url, method=method), timeout=10):
            return 200
    except urllib.error.HTTPError as error:
        return error.code


def test_calls_are_counted_by_method_and_code(metered: Stack) -> None:
    before = scrape(metered)
    session_id = metered.api.new_session()["id"]
    missing = metered.api.request("GET", f"/api/v1/task-sessions/{unique('ses')}")
    # The failed call is counted once its answer is on the way: wait for it.
    after = wait_for(metered, "shellexec_requests_total", value(
        before, "shellexec_requests_total", method=f"{SERVICE}/GetSession",
        code="NOT_FOUND") + 1, method=f"{SERVICE}/GetSession", code="NOT_FOUND")

    assert missing.status == 404
    assert value(after, "shellexec_requests_total", method=f"{SERVICE}/CreateSession",
                 code="OK") == value(before, "shellexec_requests_total",
                                     method=f"{SERVICE}/CreateSession", code="OK") + 1
    assert value(after, "shellexec_requests_total", method=f"{SERVICE}/GetSession",
                 code="NOT_FOUND") == value(before, "shellexec_requests_total",
                                            method=f"{SERVICE}/GetSession",
                                            code="NOT_FOUND") + 1
    assert session_id
    duration = "shellexec_request_duration_seconds_count"
    assert value(after, duration, method=f"{SERVICE}/GetSession") == value(
        before, duration, method=f"{SERVICE}/GetSession") + 1


def test_publishes_are_counted_by_outcome(metered: Stack) -> None:
    session_id = metered.api.new_session()["id"]
    before = scrape(metered)
    metered.api.publish(session_id, codex_start("call_1", "ls"), sequence=1)
    metered.api.publish(session_id, codex_start("call_1", "ls"), sequence=1)  # a retry
    metered.api.publish(session_id, {"sessionUpdate": "plan", "entries": []}, sequence=2)
    after = scrape(metered)

    for outcome in ("stored", "duplicate", "ignored"):
        assert value(after, "shellexec_publishes_total", outcome=outcome) == value(
            before, "shellexec_publishes_total", outcome=outcome) + 1, outcome
    publish = {"method": f"{SERVICE}/PublishUpdate"}
    assert value(after, "shellexec_requests_total", code="OK", **publish) == value(
        before, "shellexec_requests_total", code="OK", **publish) + 3
    # Each publish is one unit of work; a group holds one or more of them.
    assert value(after, "shellexec_commit_group_size_sum") == value(
        before, "shellexec_commit_group_size_sum") + 3
    assert value(after, "shellexec_commit_group_size_count") > value(
        before, "shellexec_commit_group_size_count")


def test_database_size_and_pruned_rows(metered: Stack) -> None:
    samples = scrape(metered)
    size = value(samples, "shellexec_database_bytes")
    assert size > 0
    if not metered.on_postgres:  # the file and its write-ahead log
        assert size >= Path(metered.workdir / "shellexec.db").stat().st_size
    # Exported at 0 before the first sweep that prunes (tests/store count what it prunes).
    for table in ("event", "publish_receipt"):
        assert ("shellexec_pruned_rows_total", (("table", table),)) in samples
        assert value(samples, "shellexec_pruned_rows_total", table=table) == 0


def test_texts_costly_to_mask_are_kept_and_counted(metered: Stack) -> None:
    # A control character after every character of a secret's value: the costliest text to
    # mask, about 0.2 s per 256 KiB here, far above the 10 ms that makes a text worth keeping.
    command = "echo TOKEN=" + "a\x01" * 100_000
    session_id = metered.api.new_session()["id"]
    before = value(scrape(metered), "shellexec_masked_text_bytes")
    metered.api.publish(session_id, codex_start(unique("call"), command))
    listed = metered.api.messages(session_id)
    after = value(scrape(metered), "shellexec_masked_text_bytes")
    assert listed[-1]["metadata"]["normalized"]["shell_exec"]["command"].startswith(
        "echo TOKEN=**")
    assert after >= before + len(command)


def wait_for(stack: Stack, name: str, at_least: float, timeout: float = 10.0,
             **labels: str) -> Samples:
    """Scrapes until `name` (with `labels`) reaches `at_least` (what the server does after
    answering the client, such as counting a call or a delivery, happens a moment later)."""
    deadline = time.monotonic() + timeout
    while True:
        samples = scrape(stack)
        if value(samples, name, **labels) >= at_least or time.monotonic() > deadline:
            return samples
        time.sleep(0.05)


def test_calls_to_unknown_methods_are_counted_and_logged_under_one_name(
        metered: Stack) -> None:
    """A client built against another version of the API calls a method this server lacks:
    gRPC answers UNIMPLEMENTED itself, and the operator still sees the call, under `unknown`
    (the path is the caller's to choose, so neither the log nor a label repeats it)."""
    before = scrape(metered)
    odd_method = "/shellexec.v1.ShellExecService/NoSuchMethod" + "-secret" * 10
    with grpc.insecure_channel(metered.grpc_target) as channel:
        call = channel.unary_unary(odd_method)
        with pytest.raises(grpc.RpcError) as raised:
            call(b"", metadata=(("x-request-id", "unknown-method-1"),), timeout=10)
    assert raised.value.code() == grpc.StatusCode.UNIMPLEMENTED

    counted = wait_for(metered, "shellexec_requests_total", value(
        before, "shellexec_requests_total", method="unknown", code="UNIMPLEMENTED") + 1,
        method="unknown", code="UNIMPLEMENTED")
    assert value(counted, "shellexec_requests_total", method="unknown",
                 code="UNIMPLEMENTED") == value(before, "shellexec_requests_total",
                                                method="unknown", code="UNIMPLEMENTED") + 1
    log = (metered.workdir / "server.log").read_text()
    lines = [json.loads(line) for line in log.splitlines() if "unknown-method-1" in line]
    assert [(line["method"], line["status"]) for line in lines] == [
        ("unknown", "UNIMPLEMENTED")]
    assert "secret" not in log


def test_watchers_and_delivery_lag(metered: Stack) -> None:
    session_id = metered.api.new_session()["id"]
    before = scrape(metered)
    feed = metered.api.watch(session_id)
    try:
        assert next(feed)["type"] == EVENT_HEARTBEAT
        assert value(scrape(metered), "shellexec_watchers") == value(
            before, "shellexec_watchers") + 1
        metered.api.publish(session_id, codex_start("call_1", "ls"))
        event = next(itertools.dropwhile(lambda e: e["type"] == EVENT_HEARTBEAT, feed))
        assert event["type"] == EVENT_MESSAGE_ADDED
    finally:
        feed.close()
    lag = "shellexec_feed_delivery_lag_seconds_count"
    after = wait_for(metered, lag, value(before, lag) + 1)
    assert value(after, lag) == value(before, lag) + 1
    assert value(after, "shellexec_feed_delivery_lag_seconds_sum") > value(
        before, "shellexec_feed_delivery_lag_seconds_sum")


def test_metrics_endpoint_serves_only_get_metrics(metered: Stack) -> None:
    base = metrics_url(metered).removesuffix("/metrics")
    assert status_of(f"{base}/metrics") == 200
    assert status_of(f"{base}/") == 404
    assert status_of(f"{base}/metrics/extra") == 404
    assert status_of(f"{base}/metrics", "POST") == 405
    # HEAD, which operations.md offers (a probe's check): GET's headers, no body. The client
    # library answered it 405.
    with urllib.request.urlopen(urllib.request.Request(f"{base}/metrics", method="HEAD"),
                                timeout=10) as head:
        assert head.status == 200
        assert head.headers["content-type"].startswith("text/plain")
        assert head.read() == b""


def _held_connection(port: int) -> socket.socket:
    """A connection that has sent half a request, as a slow or hostile client leaves it."""
    held = socket.create_connection(("127.0.0.1", port), timeout=30)
    held.sendall(b"GET /metrics HTTP/1.1\r\n")
    return held


def _closed_by_server(connection: socket.socket) -> bool:
    try:
        return connection.recv(1) == b""
    except ConnectionResetError:
        return True


def test_metrics_endpoint_serves_a_bounded_number_of_connections(metered: Stack) -> None:
    """Every connection held a thread of the server's for as long as it stayed open: 500
    half-sent requests made 500 threads."""
    port = int(metered.env["SHELLEXEC_METRICS_PORT"])
    held = [_held_connection(port) for _ in range(MAX_CONNECTIONS)]
    try:
        # The server accepts in order: the one past the bound finds every slot taken.
        with _held_connection(port) as one_too_many:
            assert _closed_by_server(one_too_many)
    finally:
        for connection in held:
            connection.close()
    assert wait_until(lambda: _scraped(metrics_url(metered)), 30)


def _scraped(url: str) -> bool:
    """Whether a scrape is answered 200; until the held connections' slots are given back,
    the server closes a new connection at once."""
    try:
        return status_of(url) == 200
    except (urllib.error.URLError, ConnectionError):
        return False


@pytest.mark.slow
def test_metrics_endpoint_closes_a_connection_at_its_deadline_whatever_it_sends(
        metered: Stack) -> None:
    """Closed only when silent for 10 s, a connection trickling a byte now and then held
    its slot for ever; and each close printed a traceback on the server's log."""
    stop = threading.Event()
    with _held_connection(int(metered.env["SHELLEXEC_METRICS_PORT"])) as held:

        def trickle() -> None:
            while not stop.wait(1.0):
                with contextlib.suppress(OSError):
                    held.sendall(b"X-Slow: 1\r\n")

        sender = threading.Thread(target=trickle, daemon=True)
        sender.start()
        try:
            assert _closed_by_server(held)  # within CONNECTION_SECONDS, below the socket's 30
        finally:
            stop.set()
            sender.join()
    assert "Exception occurred during processing" not in (
        metered.workdir / "server.log").read_text()


def test_public_listener_does_not_serve_metrics(metered: Stack) -> None:
    answer = metered.api.request("GET", "/metrics")
    assert answer.status == 404
    assert b"shellexec_requests" not in answer.body
    assert metered.api.request("GET", "/stats/prometheus").status == 404

