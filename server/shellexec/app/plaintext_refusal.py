"""What the front door answers a plain-HTTP client when it serves TLS (ADR 0053).

Without this, Envoy's TLS listener closed a plaintext connection without a word: curl said
"Empty reply from server", grpcurl `-plaintext` waited for its deadline, and the bridge took
the front door for a service that was down and retried for the whole of --retry-for. Envoy's
TLS inspector tells the two kinds of connection apart before any byte is consumed; a
plaintext one gets a filter chain of its own, which answers every request and reaches no
server:
- a gRPC or gRPC-Web call, in gRPC's own form: FAILED_PRECONDITION (which no client
  retries) and a message saying to connect with TLS;
- a Connect call in Connect's: a stream gets a 200 whose one frame is the end of the stream
  carrying the error (Connect clients read no body of a stream answered otherwise), a unary
  call a 400 with Connect's error body (`reply_mappers`), both `failed_precondition`;
- anything else, 400 with the API's JSON error body saying the same.
"""

from __future__ import annotations

import base64
import json
import struct
from typing import Any

from shellexec.app.browser_boundary import security_headers_filter
from shellexec.app.envoy_headers import replaced_header
from shellexec.app.envoy_stats import CONNECTION_MANAGER, ROUTER_FILTER
from shellexec.app.front_door_errors import status_filter
from shellexec.app.grpc_codecs import trailers_only_refusal

# google.rpc.Code FAILED_PRECONDITION: the request cannot work as sent, and a retry as sent
# cannot either.
FAILED_PRECONDITION = 9
MESSAGE = ("this port serves HTTPS only (TLS): connect with https:// (grpcurl: -cacert "
           "instead of -plaintext; the bridge and the clients: their TLS option)")

# The flags of a Connect frame that ends a stream.
_END_OF_STREAM = 0x02

_INSPECTOR = ("type.googleapis.com/envoy.extensions.filters.listener.tls_inspector.v3."
              "TlsInspector")


def tls_inspector() -> dict[str, Any]:
    """The listener filter that tells TLS connections from plaintext ones."""
    return {"name": "envoy.filters.listener.tls_inspector", "typed_config": {"@type": _INSPECTOR}}


def _connect_stream_route() -> dict[str, Any]:
    """The refusal of a Connect stream (content type application/connect+...), in the frame
    that ends a stream (a unary Connect call's is made by `reply_mappers`)."""
    error = {"code": "failed_precondition", "message": MESSAGE}
    end_of_stream = json.dumps({"error": error}, separators=(",", ":")).encode()
    # A Connect frame: a flags byte (2: the end of the stream), the length (4 bytes, big
    # endian), then the JSON.
    frame = bytes([_END_OF_STREAM]) + struct.pack(">I", len(end_of_stream)) + end_of_stream
    return {
        "match": {"prefix": "/", "headers": [{"name": "content-type", "string_match": {
            "prefix": "application/connect+", "ignore_case": True}}]},
        "direct_response": {"status": 200, "body": {
            "inline_bytes": base64.b64encode(frame).decode()}},
        "response_headers_to_add": [replaced_header("content-type", "application/connect+proto")],
    }


def reply_mappers() -> list[dict[str, Any]]:
    """The local reply mappers that come first on the plaintext chain: its 400 is
    FAILED_PRECONDITION in the API's JSON error body, or in Connect's for a unary Connect
    call (a connect-protocol-version header), rather than the 400's INVALID_ARGUMENT."""
    refused = status_filter("EQ", 400)
    connect = {"header_filter": {"header": {"name": "connect-protocol-version",
                                            "present_match": True}}}
    return [
        {"filter": {"and_filter": {"filters": [refused, connect]}},
         "body_format_override": {
             "json_format": {"code": "failed_precondition", "message": "%LOCAL_REPLY_BODY%"},
             "content_type": "application/json"}},
        {"filter": refused,
         "body_format_override": {
             "json_format": {"code": FAILED_PRECONDITION, "message": "%LOCAL_REPLY_BODY%"},
             "content_type": "application/json"}},
    ]


def plaintext_filter_chain(manager_fields: dict[str, Any], max_headers_kib: int
                           ) -> dict[str, Any]:
    """The filter chain of a plaintext connection to the TLS front door; `manager_fields`
    are the front door's connection timeouts, access log and local replies, so an idle or
    slow client is closed, and each request logged and answered, as the front door's are."""
    grpc_call = trailers_only_refusal(
        [{"name": "content-type", "string_match": {"prefix": "application/grpc",
                                                   "ignore_case": True}}],
        MESSAGE, str(FAILED_PRECONDITION), {"prefix": "/"})
    del grpc_call["typed_per_filter_config"]  # this chain has the router alone
    # Made JSON by `reply_mappers`, as the front door's other refusals are by theirs.
    anything_else = {"match": {"prefix": "/"},
                     "direct_response": {"status": 400, "body": {"inline_string": MESSAGE}}}
    manager = {
        "@type": CONNECTION_MANAGER, "stat_prefix": "front_door_plaintext", "codec_type": "AUTO",
        **manager_fields, "max_request_headers_kb": max_headers_kib,
        "route_config": {"name": "front_door_plaintext", "virtual_hosts": [{
            "name": "plaintext", "domains": ["*"],
            "routes": [grpc_call, _connect_stream_route(), anything_else]}]},
        "http_filters": [security_headers_filter(), ROUTER_FILTER],
    }
    return {"filter_chain_match": {"transport_protocol": "raw_buffer"},
            "filters": [{"name": "envoy.filters.network.http_connection_manager",
                         "typed_config": manager}]}
