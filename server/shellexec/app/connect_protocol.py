"""The Connect protocol at the front door, as parts of the rendered Envoy configuration.

Envoy's `connect_grpc_bridge` filter turns a Connect request into a gRPC one and the gRPC
answer back into Connect, so Connect clients (connect-web, connect-go, connect-node) reach the
service through the front door. Only the binary (Protobuf) codec: a JSON Connect request
would reach the server as `application/grpc+json`, a codec grpc.aio does not have, and come
back as an internal error naming a Python exception. The routes here refuse it first, with a
415 whose body is a Connect error (`{"code": "invalid_argument", "message": ...}`, the code
as Connect's name for it, not the REST number), so a Connect client reports the code and the
message naming the supported format instead of an unknown error. See ADR 0100.
"""

from __future__ import annotations

from typing import Any

from shellexec.app.front_door_errors import REFUSAL_FILTERS, status_filter

# The gRPC paths a Connect client calls (/package.Service/Method).
RPC_PATHS = r"/(shellexec|grpc)\.[^/]+/[^/]+"
# Connect's unary (application/json) and streaming (application/connect+json) JSON codecs.
JSON_CONTENT_TYPES = ("application/json", "application/connect+json")
REFUSAL = ("the Connect protocol is served with the binary codec only: send content-type "
           "application/proto (streams: application/connect+proto), e.g. useBinaryFormat: true")
# Request headers a browser's Connect client sends and the response headers it reads, for the
# CORS policy.
CORS_ALLOW_HEADERS = ("connect-protocol-version", "connect-timeout-ms")
CORS_EXPOSE_HEADERS = ("grpc-status-details-bin",)

# Connect's name of the code its refusals carry (google.rpc INVALID_ARGUMENT).
REFUSAL_CODE = "invalid_argument"

BRIDGE = "envoy.filters.http.connect_grpc_bridge"


def bridge_filter() -> dict[str, Any]:
    """The HTTP filter turning Connect into gRPC (after gRPC-Web, before the transcoder).
    Disabled unless a route enables it: the gRPC paths' routes do, so a REST request or a
    refused one never has its content type rewritten to gRPC's, which would keep Envoy's
    refusals out of the JSON error mapping."""
    return {"name": BRIDGE, "disabled": True, "typed_config": {
        "@type": "type.googleapis.com/envoy.extensions.filters.http.connect_grpc_bridge.v3."
                 "FilterConfig"}}


def refusal_reply_mapper() -> dict[str, Any]:
    """A local reply mapper giving the refusals Connect's error body. It must come before the
    front door's own mappers (`front_door_errors`), which would give any 415 the REST body.
    It matches any 415 to a gRPC path: these refusals, and the browser boundary's refusal of
    a form or text body sent there. A REST request (even with a Connect header) never has
    such a path, so REST errors keep their numeric code."""
    rpc_path = {"safe_regex": {"regex": RPC_PATHS + r"(\?.*)?"}}
    return {
        "filter": {"and_filter": {"filters": [
            status_filter("EQ", 415),
            {"header_filter": {"header": {"name": ":path", "string_match": rpc_path}}},
        ]}},
        "body_format_override": {
            "json_format": {"code": REFUSAL_CODE, "message": "%LOCAL_REPLY_BODY%"},
            "content_type": "application/json",
        },
    }


def _refusal(match: dict[str, Any]) -> dict[str, Any]:
    return {"match": match,
            "direct_response": {"status": 415, "body": {"inline_string": REFUSAL}},
            "typed_per_filter_config": REFUSAL_FILTERS}


def json_refusal_routes() -> list[dict[str, Any]]:
    """415 routes for JSON Connect: a POST with a JSON content type to a gRPC path, and a
    Connect GET (`?encoding=json`) to one."""
    path = {"safe_regex": {"regex": RPC_PATHS}}
    posts = [_refusal({**path, "headers": [{"name": "content-type", "string_match": {
        "prefix": content_type, "ignore_case": True}}]}) for content_type in JSON_CONTENT_TYPES]
    get = _refusal({**path, "query_parameters": [{"name": "encoding", "string_match": {
        "exact": "json", "ignore_case": True}}]})
    return [*posts, get]
