"""Two replicas on one PostgreSQL database, each with its own Envoy, and the front door that
balances across them: the feed crosses replicas, retries through either replica change
nothing, concurrent publishers lose and duplicate nothing, and neither a replica killed
mid-burst nor a PostgreSQL restart loses an acknowledged update (ADRs 0070-0072).

The feed heartbeat is 60 s here: a watcher re-reads the log on every heartbeat, so with a
short one a watcher would see other replicas' events without any cross-replica wake-up."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import grpc
import pytest

from shellexec.app import admin_socket
from shellexec.app.front_door_errors import CHECK_UNAVAILABLE
from shellexec.app.local_postgres import LocalPostgres
from shellexec.client import ShellExecClient
from shellexec.demo.rest import JsonObject, RestError
from shellexec.rules.limits import (
    MESSAGE_ARRIVAL_SECONDS,
)

from support.acp import agent_text, codex_delta, codex_end, codex_start
from support.cluster import Cluster, running_cluster
from support.health import tokenless_line_held
from support.postgres import PostgresServer
from support.rest import Api, unique
from support.stack import Stack, running_stack

QUIET = {"SHELLEXEC_HEARTBEAT_SECONDS": "60", "SHELLEXEC_LOG": "errors"}
# A watcher that hears nothing for this long fails its test (the heartbeat is 60 s).
READ_TIMEOUT = 15.0


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory,
            postgres_server: PostgresServer) -> Iterator[Cluster]:
    with running_cluster(tmp_path_factory.mktemp("cluster"), postgres_server.new_database(),
                         QUIET) as running:
        yield running


def api_of(stack: Stack) -> Api:
    return Api(stack.rest_url, timeout=READ_TIMEOUT)


def events_until(feed: Iterator[JsonObject], revision: int) -> list[JsonObject]:
    """The feed's events (heartbeats left out) up to and including `revision`."""
    events: list[JsonObject] = []
    for event in feed:
        if event["type"] == "heartbeat":
            continue
        events.append(event)
        if event["revision"] >= revision:
            return events
    raise AssertionError(f"the feed ended before revision {revision}: {events[-3:]}")


def tool_stream(call_id: str, lines: int) -> list[JsonObject]:
    deltas = [codex_delta(call_id, f"{call_id} line {index}\n") for index in range(lines)]
    output = "".join(f"{call_id} line {index}\n" for index in range(lines))
    return [codex_start(call_id, "make"), *deltas, codex_end(call_id, output, 0)]


def stored(api: Api, session_id: str) -> list[Any]:
    """What a session stores, without what differs between two sessions (ids and times)."""
    found: list[Any] = []
    for message in api.messages(session_id):
        kept = {key: value for key, value in message.items()
                if key not in ("id", "session_id", "task_id", "turn_id", "created_at",
                               "updated_at")}
        if message["type"] != "message":
            kept["output"] = api.shell_output(session_id, message["id"])["output"]
        found.append(kept)
    return found


def test_a_watcher_on_one_replica_gets_every_event_published_through_the_other(
        cluster: Cluster) -> None:
    a, b = cluster.replicas
    session_id = a.api.new_session()["id"]
    feed = api_of(b).watch(session_id, "?since_revision=0")
    assert next(feed)["type"] == "heartbeat"

    for update in tool_stream("c1", 8):
        a.api.publish(session_id, update)

    events = events_until(feed, 10)
    assert [event["revision"] for event in events] == list(range(1, 11))
    assert events[-1]["message"]["metadata"]["status"] == "complete"
    feed.close()


def test_a_watcher_resumes_from_its_revision_on_the_other_replica(cluster: Cluster) -> None:
    a, b = cluster.replicas
    session_id = a.api.new_session()["id"]
    for index in range(4):
        a.api.publish(session_id, agent_text(f"part {index}"))  # one message, four events
    first = api_of(a).watch(session_id, "?since_revision=0")
    assert [event["revision"] for event in events_until(first, 2)] == [1, 2]
    first.close()

    resumed = api_of(b).watch(session_id, "?since_revision=2")
    a.api.publish(session_id, agent_text(" and more"))
    assert [event["revision"] for event in events_until(resumed, 5)] == [3, 4, 5]
    resumed.close()


def test_retries_alternating_between_replicas_store_what_one_replica_would(
        cluster: Cluster) -> None:
    a, b = cluster.replicas
    alternating, single = a.api.new_session()["id"], a.api.new_session()["id"]
    stream = tool_stream("c1", 12)
    for sequence, update in enumerate(stream, start=1):
        first, retry = (a, b) if sequence % 2 else (b, a)
        assert first.api.publish(alternating, update, sequence=sequence)["duplicate"] is False
        assert retry.api.publish(alternating, update, sequence=sequence)["duplicate"] is True
        a.api.publish(single, update, sequence=sequence)

    assert stored(b.api, alternating) == stored(a.api, single)
    assert b.api.session(alternating)["revision"] == a.api.session(single)["revision"] == len(
        stream)


def test_fifty_concurrent_publishers_on_both_replicas_lose_and_duplicate_nothing(
        cluster: Cluster) -> None:
    a, b = cluster.replicas
    session_id = a.api.new_session()["id"]
    publishers, per_call = 50, 4
    feed = api_of(b).watch(session_id, "?since_revision=0")
    assert next(feed)["type"] == "heartbeat"

    def publish(index: int) -> None:
        stream = tool_stream(f"call{index}", per_call - 2)
        for step, update in enumerate(stream):
            sequence = index * 100 + step + 1
            first, retry = (a, b) if (index + step) % 2 else (b, a)
            assert first.api.publish(session_id, update, sequence=sequence)["duplicate"] is False
            if step % 2:  # every other update is retried through the other replica
                assert retry.api.publish(session_id, update,
                                         sequence=sequence)["duplicate"] is True

    with ThreadPoolExecutor(publishers) as pool:
        list(pool.map(publish, range(publishers)))

    total = publishers * per_call
    assert a.api.session(session_id)["revision"] == total
    assert [event["revision"] for event in events_until(feed, total)] == list(
        range(1, total + 1))
    feed.close()
    outputs = sorted(a.api.shell_output(session_id, message["id"])["output"]["stdout"]
                     for message in a.api.messages(session_id))
    assert outputs == sorted("".join(f"call{index} line {line}\n" for line in range(per_call - 2))
                             for index in range(publishers))


def publish_with_retries(api: Api, session_id: str, update: JsonObject, sequence: int,
                         statuses: list[int], deadline: float) -> JsonObject:
    """Publishes until an answer other than 502/503 comes (a replica dying or the database
    restarting); notes every status seen."""
    while time.monotonic() < deadline:
        try:
            answer = api.request("POST", f"/api/v1/task-sessions/{session_id}/updates",
                                 {"update": update, "sequence": sequence})
        except RestError:
            statuses.append(0)  # no answer at all
            time.sleep(0.05)
            continue
        statuses.append(answer.status)
        if answer.status == 200:
            result: JsonObject = answer.json()
            return result
        if answer.status not in (502, 503):
            raise AssertionError(f"{answer.status}: {answer.body[:300]!r}")
        time.sleep(0.05)
    raise AssertionError(f"sequence {sequence} was never acknowledged")


@pytest.mark.slow
def test_killing_a_replica_mid_burst_loses_no_acknowledged_update(
        tmp_path: Path, postgres_server: PostgresServer) -> None:
    with running_cluster(tmp_path, postgres_server.new_database(), QUIET) as cluster:
        a, b = cluster.replicas
        session_id = b.api.new_session()["id"]
        feed = api_of(b).watch(session_id, "?since_revision=0")
        assert next(feed)["type"] == "heartbeat"
        stream = tool_stream("c1", 118)
        statuses: list[int] = []
        deadline = time.monotonic() + 120
        acknowledged = 0
        for sequence, update in enumerate(stream, start=1):
            if sequence == 40:
                a.kill_server()
            publish_with_retries(cluster.api, session_id, update, sequence, statuses, deadline)
            acknowledged = sequence

        assert acknowledged == len(stream)
        assert [event["revision"] for event in events_until(feed, len(stream))] == list(
            range(1, len(stream) + 1))
        feed.close()
        assert b.api.session(session_id)["revision"] == len(stream)
        message = b.api.messages(session_id)[0]
        expected = "".join(f"c1 line {index}\n" for index in range(118))
        assert b.api.shell_output(session_id, message["id"])["output"]["stdout"] == expected
        assert 500 not in statuses


def test_calls_a_killed_replica_refuses_all_go_to_the_other(
        tmp_path: Path, postgres_server: PostgresServer) -> None:
    """Calls sent to a replica that just died (before a health check took it out) are
    refused at connect, and Envoy sends them to the other replica. Envoy allowed only three
    such retries at once by default: the rest of a burst answered 503, as if the pool were
    full (a probe: 93 of them when one of three replicas was killed under 32 clients)."""
    with running_cluster(tmp_path, postgres_server.new_database(), QUIET) as cluster:
        a, _ = cluster.replicas
        session_id = cluster.api.new_session()["id"]

        def get(_: int) -> int:
            try:
                cluster.api.session(session_id)
                return 200
            except RestError as error:
                return error.response.status if error.response is not None else 0

        with ThreadPoolExecutor(32) as threads:
            list(threads.map(get, range(64)))  # connections to both replicas are open
            a.kill_server()
            statuses = list(threads.map(get, range(256)))
        assert set(statuses) == {200}, sorted(statuses)


@pytest.fixture
def own_postgres() -> Iterator[LocalPostgres]:
    """A PostgreSQL server of the test's own: restarting the run's would disturb other
    stacks' connections."""
    server = LocalPostgres.create(durable=False)
    try:
        yield server
    finally:
        server.remove()


def start_after(delay: float, server: LocalPostgres) -> None:
    time.sleep(delay)
    server.start()


def until(condition: Callable[[], bool], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.1)


def revisions_up_to(api: Api, session_id: str, feed: Iterator[JsonObject],
                    last: int) -> list[int]:
    """The revisions `feed` brings up to `last`; whenever a stream ends early (a call that
    met the outage ends with UNAVAILABLE, as any), the watch resumes from its revision."""
    revisions: list[int] = []
    deadline = time.monotonic() + 60
    while True:
        try:
            for event in feed:
                if event["type"] == "heartbeat":
                    continue
                revisions.append(event["revision"])
                if event["revision"] >= last:
                    return revisions
        except RestError:
            time.sleep(0.1)
        assert time.monotonic() < deadline, f"the feed stopped at {revisions[-1:]}"
        feed = api.watch(session_id, f"?since_revision={revisions[-1] if revisions else 0}")


@pytest.mark.slow
def test_a_postgres_restart_answers_unavailable_then_the_replicas_serve_again(
        tmp_path: Path, own_postgres: LocalPostgres) -> None:
    with running_cluster(tmp_path, own_postgres.url(), QUIET) as cluster:
        a, b = cluster.replicas
        session_id = a.api.new_session()["id"]
        feed = api_of(b).watch(session_id, "?since_revision=0")
        assert next(feed)["type"] == "heartbeat"
        stream = tool_stream("c1", 28)
        for sequence, update in enumerate(stream[:10], start=1):
            a.api.publish(session_id, update, sequence=sequence)

        own_postgres.stop()
        during = [replica.api.request("POST", f"/api/v1/task-sessions/{session_id}/updates",
                                      {"update": stream[10], "sequence": 11})
                  for replica in (a, b) for _ in range(2)]
        listed = a.api.request("GET", f"/api/v1/task-sessions/{session_id}/messages")
        statuses: list[int] = []
        deadline = time.monotonic() + 60
        with ThreadPoolExecutor(max_workers=1) as pool:
            restarted = pool.submit(start_after, 1.0, own_postgres)
            try:
                for sequence, update in enumerate(stream[10:], start=11):
                    publish_with_retries(cluster.api, session_id, update, sequence, statuses,
                                         deadline)
            finally:
                restarted.result()  # a failed restart (with PostgreSQL's log) is the cause

        for answer in (*during, listed):
            assert answer.status == 503, answer.body[:300]
            assert answer.json()["code"] == 14  # UNAVAILABLE
        assert 500 not in statuses
        until(lambda: a.api.session(session_id)["revision"] == len(stream))
        assert revisions_up_to(api_of(b), session_id, feed, len(stream)) == list(
            range(1, len(stream) + 1))
        message = b.api.messages(session_id)[0]
        expected = "".join(f"c1 line {index}\n" for index in range(28))
        assert b.api.shell_output(session_id, message["id"])["output"]["stdout"] == expected


@pytest.mark.slow
def test_connections_idle_through_a_postgres_restart_serve_their_next_call(
        tmp_path: Path, own_postgres: LocalPostgres) -> None:
    """Each reader's and the writer's connection broke while idle; each failed its next use
    with UNAVAILABLE, minutes after the database was back, while readiness (a new connection)
    said SERVING. A lost connection opened before a read or a write is now renewed once."""
    with running_stack(tmp_path, SHELLEXEC_DATABASE_URL=own_postgres.url(), **QUIET) as stack:
        session_id = stack.api.new_session()["id"]
        stream = tool_stream("c1", 4)
        stack.api.publish(session_id, stream[0], sequence=1)
        # Every reader thread opens its connection.
        with ThreadPoolExecutor(max_workers=8) as pool:
            list(pool.map(lambda _: stack.api.session(session_id), range(32)))

        own_postgres.restart()

        path = f"/api/v1/task-sessions/{session_id}"
        reads = [stack.api.request("GET", path).status for _ in range(16)]
        with ThreadPoolExecutor(max_workers=8) as pool:
            reads += pool.map(lambda _: stack.api.request("GET", path).status, range(32))
        publishes = [stack.api.request("POST", f"{path}/updates",
                                       {"update": update, "sequence": sequence}).status
                     for sequence, update in enumerate(stream[1:], start=2)]
        assert set(reads) == {200}, reads
        assert set(publishes) == {200}, publishes


@pytest.mark.slow
def test_with_authentication_a_postgres_outage_answers_unavailable_saying_why(
        tmp_path: Path, own_postgres: LocalPostgres) -> None:
    """The token lookup runs before the handler the error interceptor wraps: direct calls
    answered UNKNOWN naming our exception class (and a bridge does not retry UNKNOWN), and the
    front door's token check dropped its connection, a 503 without a message."""
    with running_stack(tmp_path, SHELLEXEC_DATABASE_URL=own_postgres.url(),
                       SHELLEXEC_AUTH="on", **QUIET) as stack:
        token = stack.create_token("outage", "admin")
        session_id = stack.api_as(token).new_session()["id"]
        own_postgres.stop()
        try:
            with (ShellExecClient(stack.grpc_target, token=token) as client,
                  pytest.raises(grpc.RpcError) as direct):
                client.get_session(session_id)
            answer = stack.api_as(token).request("GET", f"/api/v1/task-sessions/{session_id}")
        finally:
            own_postgres.start()
        assert direct.value.code() == grpc.StatusCode.UNAVAILABLE
        assert "the database is unavailable" in (direct.value.details() or "")
        assert answer.status == 503, answer.body[:300]
        assert answer.json()["code"] == 14
        assert answer.json()["message"] == CHECK_UNAVAILABLE
        assert "Traceback" not in (stack.workdir / "server.log").read_text()
        until(lambda: stack.api_as(token).request(
            "GET", f"/api/v1/task-sessions/{session_id}").status == 200)


def health_check_successes(front: Stack) -> int:
    """How many of the front door's health checks of the replicas succeeded, in all."""
    stats = admin_socket.get_json(front.admin_socket,
                                  "/stats?format=json&filter=health_check\\.success$")
    return sum(int(stat["value"]) for stat in stats["stats"] if "value" in stat)


@pytest.mark.slow
def test_the_front_door_health_checks_pass_a_full_tokenless_line(
        tmp_path: Path, postgres_server: PostgresServer) -> None:
    """Anyone who reaches a replica's gRPC port can fill its request budget's line of callers
    without a token with four health checks that never send their message: the front door's
    health checks, which carry no token, waited there past their 1 s timeout, and the
    replicas left the rotation. They carry the probe secret, and have a line of their own."""
    secured = {**QUIET, "SHELLEXEC_AUTH": "on",
               "SHELLEXEC_PROBE_SECRET": "probe-secret-of-these-tests-0123456789"}
    with (running_cluster(tmp_path, postgres_server.new_database(), secured) as cluster,
          ExitStack() as held):
        channels = [held.enter_context(grpc.insecure_channel(replica.grpc_target))
                    for replica in cluster.replicas]
        for channel in channels:
            held.enter_context(tokenless_line_held(channel))
        # Two more rounds of the front door's checks of every replica pass meanwhile
        # (checked every second), while the held checks still hold the line: they end
        # after MESSAGE_ARRIVAL_SECONDS, when a waiting check would pass too.
        before = health_check_successes(cluster.front)
        until(lambda: health_check_successes(cluster.front) >= before + 2 * len(channels),
              timeout=MESSAGE_ARRIVAL_SECONDS / 2)


def test_a_watcher_on_the_other_replica_hears_session_deleted(cluster: Cluster) -> None:
    # The deleting transaction notifies the other replicas; a replay that finds the session
    # gone (a lost notice) ends the stream the same way (tests/feed).
    a, b = cluster.replicas
    session_id = a.api.new_session()["id"]
    a.api.publish(session_id, agent_text("hello"))
    feed = api_of(b).watch(session_id, "?since_revision=1")
    assert next(feed)["type"] == "heartbeat"  # subscribed on b

    a.api.call("DELETE", f"/api/v1/task-sessions/{session_id}")

    try:
        event = next(feed)
    except Exception as error:  # the read timed out: b's watcher was never told
        pytest.fail(f"no event on b within {READ_TIMEOUT} s of the deletion on a: {error!r}")
    assert (event["type"], event["revision"]) == ("session_deleted", 1)
    assert list(feed) == []  # and the stream ends


def test_sessions_created_at_once_on_both_replicas_each_get_their_own_number(
        cluster: Cluster) -> None:
    # Both replicas number new sessions from one counter row (ADR 0118): raising it locks the
    # row, so concurrent creations take turns instead of giving one number twice (which the
    # unique index on the number would refuse).
    a, b = cluster.replicas
    task, count = unique("numbered"), 40

    def create(index: int) -> str:
        session: str = (a, b)[index % 2].api.create_session(task, "codex")["id"]
        return session

    with ThreadPoolExecutor(count) as pool:
        created = list(pool.map(create, range(count)))

    assert len(set(created)) == count
    # Creation order is number order: the newest page, read through either replica, holds
    # every one of them once.
    newest = b.api.call("GET", f"/api/v1/task-sessions?limit={count}&sort=desc")["sessions"]
    assert sorted(session["id"] for session in newest) == sorted(created)
