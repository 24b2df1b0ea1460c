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

import base64
import json
import re
import struct
from typing import Any

from shellexec.app import token_check
from shellexec.app.envoy_headers import replaced_header
from shellexec.app.front_door_errors import (
    ERROR_INFO_TYPE,
    REFUSAL_FILTERS,
    check_detail,
    status_filter,
    token_refusal_filter,
)
from shellexec.rules.limits import MAX_REST_BODY_BYTES
from shellexec.v1 import shell_exec_service_pb2 as pb

SERVICE_DESCRIPTOR = pb.DESCRIPTOR.services_by_name["ShellExecService"]

# The gRPC paths a Connect client calls (/package.Service/Method).
RPC_PATHS = r"/(shellexec|grpc)\.[^/]+/[^/]+"


def _on_path(regex: str) -> dict[str, Any]:
    """A local reply filter: the request's path is `regex`, a query string or none after it."""
    return {"header_filter": {"header": {"name": ":path", "string_match": {
        "safe_regex": {"regex": regex + r"(\?.*)?"}}}}}


# A local reply filter: the request's path is a gRPC path.
_ON_RPC_PATH = _on_path(RPC_PATHS)
# A Connect call: a gRPC path, with Connect's `connect-protocol-version` header.
_CONNECT_CALL = [
    _ON_RPC_PATH,
    {"header_filter": {"header": {"name": "connect-protocol-version", "present_match": True}}}]
# Connect's unary (application/json) and streaming (application/connect+json) JSON codecs.
JSON_CONTENT_TYPES = ("application/json", "application/connect+json")
REFUSAL = ("the Connect protocol is served with the binary codec only: send content-type "
           "application/proto (streams: application/connect+proto), e.g. useBinaryFormat: true")
# Request headers a browser's Connect client sends and the response headers it reads, for the
# CORS policy.
CORS_ALLOW_HEADERS = ("connect-protocol-version", "connect-timeout-ms")
CORS_EXPOSE_HEADERS = ("grpc-status-details-bin",)

# The methods that answer a stream, which Connect calls with its streaming content type only:
# the service's own (from its descriptor), health's Watch and reflection.
STREAM_PATHS = (
    *(f"/{SERVICE_DESCRIPTOR.full_name}/{method.name}"
      for method in SERVICE_DESCRIPTOR.methods if method.server_streaming),
    "/grpc.health.v1.Health/Watch",
    "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo",
    "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo",
)
# Connect's unary content type, and its streams'.
UNARY_CONTENT_TYPE = "application/proto"
STREAM_CONTENT_TYPE = "application/connect+proto"
# The flags of a Connect stream's end-of-stream message.
END_STREAM_FLAG = 0x02
STREAM_REFUSAL = ("this method answers a stream: send content-type application/connect+proto "
                  "(a Connect client's server-streaming call)")

# Connect's name of the code its refusals carry (google.rpc INVALID_ARGUMENT).
REFUSAL_CODE = "invalid_argument"

BRIDGE = "envoy.filters.http.connect_grpc_bridge"
# Set on a Connect call before the bridge makes it gRPC's (it removes
# `connect-protocol-version`), so that Envoy's own replies after that, the bridge's 413, can
# still be told to be a Connect call's. A client's own copy is removed as the request arrives.
CALL_MARKER = "x-shellexec-connect-call"
_HEADER_MUTATION = ("type.googleapis.com/envoy.extensions.filters.http.header_mutation.v3."
                    "HeaderMutation")

# The one content coding a request may name, as gRPC and Connect write it: none at all. Every
# protocol is served uncompressed requests only (docs/api.md, "Limits").
IDENTITY_ENCODING = "identity"
# What a compressed Connect call is told (`compressed_request_routes`): Connect's unary calls
# name their compression in content-encoding, its streams in connect-content-encoding.
COMPRESSED_REFUSAL = ("requests are served uncompressed only: send no content-encoding (streams: "
                      "no connect-content-encoding), or identity; turn sendCompression off in "
                      "the client")
# The HTTP status of that refusal to a unary call: Connect's for its code `unimplemented`.
COMPRESSED_STATUS = 501
# The name of the routes refusing a Connect stream, which answer HTTP 200 with the error in
# the body: the access log's errors filter (`envoy.ERRORS_FILTER`) knows them by it.
STREAM_REFUSAL_ROUTE = "connect_stream_refusal"

# What the bridge holds of a unary Connect call: its message, once framed as gRPC's (a flag
# byte and four of length before it). Held to MAX_REST_BODY_BYTES, a message of 8 MiB less up
# to 4 bytes was refused with Envoy's own text/plain 413.
GRPC_FRAME_PREFIX_BYTES = 5
UNARY_BUFFER_BYTES = MAX_REST_BODY_BYTES + GRPC_FRAME_PREFIX_BYTES
# What a Connect call whose message is over what the bridge holds whole is told (Envoy's own
# words name an internal buffer, and Connect clients read a 413 without a Connect body as
# UNKNOWN, "HTTP 413").
OVERSIZE = (f"the request is over {MAX_REST_BODY_BYTES} bytes, the most a Connect call's "
            "message may be at the front door (a gRPC or gRPC-Web call may send up to the "
            "server's message limit)")


def bridge_filter() -> dict[str, Any]:
    """The HTTP filter turning Connect into gRPC (after gRPC-Web, before the transcoder).
    Disabled unless a route enables it: the gRPC paths' routes do, so a REST request or a
    refused one never has its content type rewritten to gRPC's, which would keep Envoy's
    refusals out of the JSON error mapping."""
    return {"name": BRIDGE, "disabled": True, "typed_config": {
        "@type": "type.googleapis.com/envoy.extensions.filters.http.connect_grpc_bridge.v3."
                 "FilterConfig"}}


def marker_filter() -> dict[str, Any]:
    """The HTTP filter (just before the bridge) marking a Connect call with CALL_MARKER, a
    copy of its `connect-protocol-version` (no value, no header: other requests stay
    unmarked)."""
    copy = {"key": CALL_MARKER, "value": "%REQ(connect-protocol-version)%"}
    return {"name": "shellexec.connect_call_marker", "typed_config": {
        "@type": _HEADER_MUTATION,
        "mutations": {"request_mutations": [{"append": {
            "header": copy, "append_action": "OVERWRITE_IF_EXISTS_OR_ADD"}}]}}}


def refusal_reply_mapper() -> dict[str, Any]:
    """A local reply mapper giving the refusals Connect's error body. It must come before the
    front door's own mappers (`front_door_errors`), which would give any 415 the REST body.
    It matches any 415 to a gRPC path: these refusals, and the browser boundary's refusal of
    a form or text body sent there. A REST request (even with a Connect header) never has
    such a path, so REST errors keep their numeric code."""
    return _connect_error([status_filter("EQ", 415), _ON_RPC_PATH],
                          {"code": REFUSAL_CODE, "message": "%LOCAL_REPLY_BODY%"})


def compressed_reply_mapper() -> dict[str, Any]:
    """A local reply mapper giving the refusal of a compressed unary Connect call
    (`compressed_request_routes`, 501 on a gRPC path) Connect's error body, `unimplemented`."""
    return _connect_error([status_filter("EQ", COMPRESSED_STATUS), _ON_RPC_PATH],
                          {"code": "unimplemented", "message": "%LOCAL_REPLY_BODY%"})


def oversize_reply_mappers(health_path: str, health_oversize: str) -> list[dict[str, Any]]:
    """Local reply mappers giving the 413 of a Connect call's message over what the front door
    holds Connect's error body, `resource_exhausted`, as a gRPC client gets RESOURCE_EXHAUSTED
    for a message over the server's limit: a health check's (at `health_path`, over its own
    bound, saying `health_oversize`), then any other call's (over MAX_REST_BODY_BYTES, saying
    OVERSIZE). Each is the 413 of a call announcing its length (`oversize_routes`, and the
    health check's own route) or of the bridge's buffer for one sent in chunks, which the
    bridge had made gRPC's by then: a Connect call is told by CALL_MARKER."""
    marked = {"header_filter": {"header": {"name": CALL_MARKER, "present_match": True}}}

    def mapper(on_path: dict[str, Any], message: str) -> dict[str, Any]:
        return _connect_error([status_filter("EQ", 413), on_path, marked],
                              {"code": "resource_exhausted", "message": message})
    return [mapper(_on_path(re.escape(health_path)), health_oversize),
            mapper(_ON_RPC_PATH, OVERSIZE)]


def header_count_reply_mapper() -> dict[str, Any]:
    """A local reply mapper giving the front door's 431 for too many header fields (its own,
    with the count in its message) Connect's error body, `resource_exhausted`: a Connect call
    got the REST body (`"code": 8`), which a Connect client reads as an unknown error. The
    431 comes before the bridge, so the call is still told by its `connect-protocol-version`
    on a gRPC path."""
    return _connect_error([status_filter("EQ", 431), *_CONNECT_CALL],
                          {"code": "resource_exhausted", "message": "%LOCAL_REPLY_BODY%"})


def unauthenticated_reply_mappers() -> list[dict[str, Any]]:
    """Local reply mappers giving the front door's token check's 401 to a Connect call
    Connect's error body, with the check's reason as an ErrorInfo in Connect's `details`
    (`{type, value}`, the value the serialized ErrorInfo in base64, kept from the check's
    refusal by Envoy: `token_check.DETAILS_HEADERS`), or without `details` when the check
    said no reason (an empty value would make a client refuse the whole body). The check
    refuses before the bridge has made the call gRPC, so no other mapper gives it Connect's
    shape, and a Connect client got the check's plain text: it could tell only the HTTP
    status, not a missing token from a revoked one. A Connect call is told by its
    `connect-protocol-version` header on a gRPC path."""
    info = {"type": ERROR_INFO_TYPE, "value": check_detail(token_check.ERROR_INFO_HEADER)}
    body = {"code": "unauthenticated", "message": "%LOCAL_REPLY_BODY%"}
    return [_connect_error([token_refusal_filter(), *_CONNECT_CALL], {**body, "details": [info]}),
            _connect_error([status_filter("EQ", 401), *_CONNECT_CALL], body)]


def _connect_error(filters: list[dict[str, Any]], body: dict[str, Any]) -> dict[str, Any]:
    """A local reply mapper giving a reply that meets every one of `filters` Connect's JSON
    error `body`."""
    return {"filter": {"and_filter": {"filters": filters}},
            "body_format_override": {"json_format": body, "content_type": "application/json"}}


def _refusal(match: dict[str, Any], reason: str = REFUSAL) -> dict[str, Any]:
    return {"match": match,
            "direct_response": {"status": 415, "body": {"inline_string": reason}},
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


def oversize_routes() -> list[dict[str, Any]]:
    """A 413 route for a unary Connect call announcing a message over what the bridge holds
    whole (MAX_REST_BODY_BYTES), refused before any of it is read, with OVERSIZE, which
    `oversize_reply_mappers` give Connect's error body. A call that announces no length is
    refused by the bridge's buffer once it holds more, with the same body."""
    announced = {"name": "content-length", "range_match": {
        "start": MAX_REST_BODY_BYTES + 1, "end": 2**62}}
    unary = {"name": "content-type", "string_match": {
        "prefix": UNARY_CONTENT_TYPE, "ignore_case": True}}
    return [{"match": {"safe_regex": {"regex": RPC_PATHS}, "headers": [unary, announced]},
             "direct_response": {"status": 413, "body": {"inline_string": OVERSIZE}},
             "typed_per_filter_config": REFUSAL_FILTERS}]


def unary_call_to_stream_routes() -> list[dict[str, Any]]:
    """415 routes for a unary Connect call (`application/proto`) to a method that answers a
    stream. The bridge would hold the whole answer until the stream ended, which a feed never
    does: the call hung, silently, holding one of its caller's feeds."""
    return [_refusal({"path": path, "headers": [{"name": "content-type", "string_match": {
        "prefix": UNARY_CONTENT_TYPE, "ignore_case": True}}]}, STREAM_REFUSAL)
        for path in STREAM_PATHS]


def encoded(header: str) -> list[dict[str, Any]]:
    """Header matchers for a request whose `header` names a content coding other than
    `identity` (an empty one, or one in capitals, too: the server would not know it); a
    request without the header does not match."""
    return [{"name": header, "present_match": True},
            {"name": header, "string_match": {"exact": IDENTITY_ENCODING},
             "invert_match": True}]


def end_of_stream(code: str, message: str) -> bytes:
    """A Connect stream's end-of-stream message (flags 0x02, its length, then JSON) carrying
    the error `code` and `message`: how a Connect stream is answered an error, which a Connect
    client reads with its code and message (a stream refused with an HTTP error status is
    reported as that status alone, e.g. UNKNOWN "HTTP 501")."""
    body = json.dumps({"error": {"code": code, "message": message}}).encode()
    return struct.pack(">BI", END_STREAM_FLAG, len(body)) + body


def compressed_request_routes() -> list[dict[str, Any]]:
    """Routes refusing a compressed Connect call with COMPRESSED_REFUSAL, code
    `unimplemented`, as Connect's protocol has a server answer a compression it does not
    take: a unary call (`application/proto`) whose content-encoding names one gets 501, which
    `compressed_reply_mapper` gives Connect's error body, and `accept-encoding: identity`; a
    stream (`application/connect+proto`) whose connect-content-encoding names one gets a
    stream of the end-of-stream message alone, and `connect-accept-encoding: identity`.
    The bridge passed either on as a compressed gRPC message, which the server inflated: the
    8 MiB a unary call may send counted the compressed bytes, so 16 KB became the server's
    whole message limit (16 MiB) to hold and parse. A Connect call carrying gRPC's own
    grpc-encoding is refused the same way: the bridge passed that on too, and a value the
    server cannot read (`GZIP`) left its connection from Envoy failing later calls that name
    an encoding, other clients' too."""
    def match(content_type: str, header: str) -> dict[str, Any]:
        return {"safe_regex": {"regex": RPC_PATHS}, "headers": [
            {"name": "content-type", "string_match": {"prefix": content_type,
                                                      "ignore_case": True}},
            *encoded(header)]}
    end = end_of_stream("unimplemented", COMPRESSED_REFUSAL)
    unary = [{"match": match(UNARY_CONTENT_TYPE, header),
              "direct_response": {"status": COMPRESSED_STATUS,
                                  "body": {"inline_string": COMPRESSED_REFUSAL}},
              "response_headers_to_add": [replaced_header("accept-encoding", "identity")],
              "typed_per_filter_config": REFUSAL_FILTERS}
             for header in ("content-encoding", "grpc-encoding")]
    stream = [{"name": STREAM_REFUSAL_ROUTE, "match": match(STREAM_CONTENT_TYPE, header),
               "direct_response": {"status": 200, "body": {
                   "inline_bytes": base64.b64encode(end).decode()}},
               "response_headers_to_add": [
                   replaced_header("content-type", STREAM_CONTENT_TYPE),
                   replaced_header("connect-accept-encoding", "identity")],
               "typed_per_filter_config": REFUSAL_FILTERS}
              for header in ("connect-content-encoding", "grpc-encoding")]
    return [*unary, *stream]
