"""A session deleted through one replica ends the streams of its watchers on every replica with
`session_deleted`, as on the replica that deleted it: the deleting transaction notifies the
other replicas (`store.feed_notices`), and a replay that finds the session gone (a lost notice)
ends the stream the same way.

The heartbeat is 60 s, as in test_replicas: a stream that is told ends at once; one that is
not says nothing within the read timeout."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from support.acp import agent_text
from support.cluster import Cluster, running_cluster
from support.postgres import PostgresServer
from support.rest import Api
from support.stack import Stack

QUIET = {"SHELLEXEC_HEARTBEAT_SECONDS": "60", "SHELLEXEC_LOG": "errors"}
READ_TIMEOUT = 15.0


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory,
            postgres_server: PostgresServer) -> Iterator[Cluster]:
    with running_cluster(tmp_path_factory.mktemp("cluster"), postgres_server.new_database(),
                         QUIET) as running:
        yield running


def api_of(stack: Stack) -> Api:
    return Api(stack.rest_url, timeout=READ_TIMEOUT)


@pytest.mark.slow
def test_a_watcher_on_the_other_replica_hears_session_deleted(cluster: Cluster) -> None:
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
