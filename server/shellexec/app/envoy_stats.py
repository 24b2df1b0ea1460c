"""Envoy's own statistics on a loopback port, read-only, as parts of the rendered config.

Envoy's admin interface is a Unix socket (ADR 0056) and stays one: it also answers
`POST /quitquitquit`, `/config_dump` and other requests no scraper should reach. This listener
serves exactly `GET /stats/prometheus` (query parameters such as `usedonly` pass) by routing it
to a cluster whose one endpoint is the admin socket; any other method on that path is 405,
any other path 404, and paths are normalized first so no `..` or `%2F` reaches the socket
under the allowed name. Only loopback Host names are answered (421 otherwise), so a page on a
name rebound to 127.0.0.1 cannot read them. See ADR 0061.
"""

from __future__ import annotations

from typing import Any

from shellexec.app.browser_boundary import foreign_host_virtual_host, loopback_hosts
from shellexec.app.envoy_headers import replaced_header

STATS_HOST = "127.0.0.1"
STATS_PATH = "/stats/prometheus"
ADMIN_CLUSTER = "envoy_admin"
# The type of a listener's HTTP connection manager, and its last filter, which routes: what
# every listener Envoy answers on its own (this one, the plaintext refusal) is built from.
CONNECTION_MANAGER = ("type.googleapis.com/envoy.extensions.filters.network."
                      "http_connection_manager.v3.HttpConnectionManager")
ROUTER_FILTER = {"name": "envoy.filters.http.router", "typed_config": {
    "@type": "type.googleapis.com/envoy.extensions.filters.http.router.v3.Router"}}


def _refusal(status: int, text: str) -> dict[str, Any]:
    return {"status": status, "body": {"inline_string": f"{text}\n"}}


def _routes() -> list[dict[str, Any]]:
    get = {"name": ":method", "string_match": {"exact": "GET"}}
    return [
        {"match": {"path": STATS_PATH, "headers": [get]},
         "route": {"cluster": ADMIN_CLUSTER, "timeout": "10s"}},
        {"match": {"path": STATS_PATH},
         "direct_response": _refusal(405, "method not allowed: only GET"),
         "response_headers_to_add": [replaced_header("allow", "GET")]},
        {"match": {"prefix": "/"},
         "direct_response": _refusal(404, f"not found: only GET {STATS_PATH} is served")},
    ]


def stats_listener(port: int, connection_timeouts: dict[str, Any]) -> dict[str, Any]:
    """The read-only statistics listener on STATS_HOST:`port`, closing idle and slow client
    connections as `connection_timeouts` (connection manager fields) say."""
    manager = {
        "@type": CONNECTION_MANAGER, "stat_prefix": "envoy_stats", "codec_type": "AUTO",
        **connection_timeouts,
        "normalize_path": True, "merge_slashes": True,
        "path_with_escaped_slashes_action": "REJECT_REQUEST",
        "route_config": {"name": "envoy_stats", "virtual_hosts": [
            {"name": "envoy_stats", "domains": loopback_hosts(port), "routes": _routes()},
            foreign_host_virtual_host()]},
        "http_filters": [ROUTER_FILTER],
    }
    return {
        "name": "envoy_stats",
        "address": {"socket_address": {"address": STATS_HOST, "port_value": port}},
        "enable_reuse_port": False,
        "filter_chains": [{"filters": [{"name": "envoy.filters.network.http_connection_manager",
                                        "typed_config": manager}]}],
    }


def admin_cluster(admin_socket: str) -> dict[str, Any]:
    """The cluster whose one endpoint is the admin interface's Unix socket."""
    return {
        "name": ADMIN_CLUSTER, "type": "STATIC", "connect_timeout": "1s",
        "load_assignment": {"cluster_name": ADMIN_CLUSTER, "endpoints": [{"lb_endpoints": [
            {"endpoint": {"address": {"pipe": {"path": admin_socket}}}}]}]},
    }
