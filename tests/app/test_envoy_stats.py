"""Envoy's statistics on their own loopback listener (SHELLEXEC_ENVOY_METRICS_PORT): GET
/stats/prometheus answers from the admin socket; nothing else of the admin interface is
reachable through it, and Envoy keeps running whatever is asked."""

from __future__ import annotations

import http.client
from collections.abc import Callable, Iterator

import pytest

from shellexec.app import admin_socket, envoy
from shellexec.app.settings import Settings

from support.stack import Stack, free_port, running_stack


@pytest.fixture(scope="module")
def with_stats(tmp_path_factory: pytest.TempPathFactory,
               new_database: Callable[[], dict[str, str]]) -> Iterator[Stack]:
    with running_stack(tmp_path_factory.mktemp("envoy-stats"),
                       SHELLEXEC_ENVOY_METRICS_PORT=str(free_port()), **new_database()) as running:
        yield running


def ask(stack: Stack, method: str, path: str) -> tuple[int, bytes]:
    port = int(stack.env["SHELLEXEC_ENVOY_METRICS_PORT"])
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        connection.request(method, path)
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


def envoy_is_live(stack: Stack) -> bool:
    assert stack.envoy is not None
    info = admin_socket.get_json(stack.admin_socket, "/server_info")
    return stack.envoy.poll() is None and isinstance(info, dict) and info["state"] == "LIVE"


def test_get_stats_prometheus_answers_envoys_statistics(with_stats: Stack) -> None:
    status, body = ask(with_stats, "GET", "/stats/prometheus")
    assert status == 200
    assert b"# TYPE envoy_server_live gauge" in body
    assert b"envoy_cluster_upstream_cx_total{envoy_cluster_name=\"shellexec_grpc\"}" in body


@pytest.mark.parametrize(("method", "path", "expected"), [
    ("POST", "/quitquitquit", 404),
    ("GET", "/quitquitquit", 404),
    ("GET", "/config_dump", 404),
    ("GET", "/server_info", 404),
    ("POST", "/logging?level=trace", 404),
    ("POST", "/stats/prometheus", 405),
    ("PUT", "/stats/prometheus", 405),
    ("POST", "/stats/prometheus/../quitquitquit", 404),
    ("GET", "/stats/prometheus/../config_dump", 404),
    ("POST", "/stats%2Fprometheus", 400),
    ("GET", "/stats", 404),
])
def test_the_rest_of_the_admin_interface_is_refused(with_stats: Stack, method: str, path: str,
                                                    expected: int) -> None:
    status, body = ask(with_stats, method, path)
    assert status == expected
    assert b"envoy_server" not in body
    assert b"configs" not in body
    assert envoy_is_live(with_stats)


def test_envoy_keeps_running_and_serving_after_the_refusals(with_stats: Stack) -> None:
    for path in ("/quitquitquit", "/healthcheck/fail", "/drain_listeners"):
        ask(with_stats, "POST", path)
    assert envoy_is_live(with_stats)
    assert ask(with_stats, "GET", "/stats/prometheus")[0] == 200
    health = admin_socket.get_json(with_stats.admin_socket, "/server_info")
    assert health["state"] == "LIVE"
    assert with_stats.api.new_session()["id"]


def test_the_statistics_listener_is_rendered_only_when_its_port_is_set() -> None:
    assert "envoy_stats" not in envoy.render(Settings(), 50051)
    rendered = envoy.render(Settings(envoy_metrics_port=9465), 50051)
    assert '"port_value": 9465' in rendered
    assert '"pipe": {"path": ".run/envoy/admin.sock"}' in rendered
