"""Feeds reach the server over connections of their own (ADR 0044): the rendered Envoy
configuration routes WatchMessages (native gRPC, gRPC-Web and the REST `:watch` route, which
the transcoder turns into it) to a cluster no other route uses, for the same server."""

from __future__ import annotations

from typing import Any

import yaml  # type: ignore[import-untyped]

from shellexec.app.envoy import render
from shellexec.app.settings import Settings

WATCH = "/shellexec.v1.ShellExecService/WatchMessages"


def config() -> dict[str, Any]:
    rendered: dict[str, Any] = yaml.safe_load(render(Settings(), grpc_port=50051))
    return rendered


def clusters_by_prefix() -> dict[str, str]:
    listener = config()["static_resources"]["listeners"][0]
    manager = listener["filter_chains"][0]["filters"][0]["typed_config"]
    routes = manager["route_config"]["virtual_hosts"][0]["routes"]
    return {route["match"]["prefix"]: route["route"]["cluster"] for route in routes
            if "prefix" in route["match"] and "route" in route}


def test_the_feed_has_a_cluster_of_its_own_for_the_same_server() -> None:
    by_prefix = clusters_by_prefix()
    feed = by_prefix.pop(WATCH)
    assert feed not in by_prefix.values()
    clusters = {c["name"]: c for c in config()["static_resources"]["clusters"]}
    unary = clusters[by_prefix["/shellexec.v1.ShellExecService/"]]
    assert clusters[feed]["load_assignment"]["endpoints"] == unary["load_assignment"]["endpoints"]
    assert clusters[feed]["typed_extension_protocol_options"] == unary[
        "typed_extension_protocol_options"]
