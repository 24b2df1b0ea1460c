"""The server's /metrics and Envoy's /stats/prometheus answer only loopback Host names (421
otherwise): a page on a name the attacker rebinds to 127.0.0.1 (DNS rebinding) would be
same-origin with them and could read both, as the front door already refuses."""

from __future__ import annotations

import http.client
from collections.abc import Iterator
from pathlib import Path

import pytest

from support.stack import Stack, free_port, running_stack

REBOUND = "rebind.attacker.example"


@pytest.fixture(scope="module")
def with_metrics(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    workdir: Path = tmp_path_factory.mktemp("review-metrics")
    with running_stack(workdir, SHELLEXEC_METRICS_PORT=str(free_port()),
                       SHELLEXEC_ENVOY_METRICS_PORT=str(free_port())) as running:
        yield running


@pytest.mark.parametrize(("setting", "path"), [("SHELLEXEC_METRICS_PORT", "/metrics"),
                                               ("SHELLEXEC_ENVOY_METRICS_PORT",
                                                "/stats/prometheus")])
def test_a_rebound_host_cannot_read_the_metrics(with_metrics: Stack, setting: str,
                                                path: str) -> None:
    port = int(with_metrics.env[setting])
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        connection.request("GET", path, headers={"Host": f"{REBOUND}:{port}"})
        response = connection.getresponse()
        body = response.read()
    finally:
        connection.close()
    assert response.status != 200, body[:200]
