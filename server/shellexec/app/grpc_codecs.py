"""gRPC and gRPC-Web at the front door take the Protobuf codec only, as parts of the rendered
Envoy configuration.

A gRPC request names its codec in the content type (`application/grpc+json`). grpc.aio has
only Protobuf, so such a call reached the server and came back UNAVAILABLE, which a client
retries as if the server were down. Envoy's gRPC-Web filter knows only the Protobuf content
types, so `application/grpc-web+json` went on to the transcoder as a REST request and got its
plain-text 404. The route here answers every such call first, in gRPC's own form (HTTP 200, no
body, `grpc-status` 3 INVALID_ARGUMENT and a message naming the supported content types), so
any gRPC or gRPC-Web client reports the reason. See ADR 0121. A call whose grpc-encoding
names a compression is answered the same way, UNIMPLEMENTED: requests are uncompressed
(ADR 0023).
"""

from __future__ import annotations

from typing import Any

from shellexec.app.connect_protocol import RPC_PATHS, encoded
from shellexec.app.envoy_headers import replaced_header
from shellexec.app.front_door_errors import REFUSAL_FILTERS

# What gRPC (`application/grpc`, `application/grpc+proto`) and gRPC-Web (`application/grpc-web`,
# `application/grpc-web-text`, each optionally `+proto`) send with Protobuf; parameters after
# `;` are allowed.
PROTOBUF_CONTENT_TYPES = r"(?i)application/grpc(-web(-text)?)?(\+proto)?\s*(;.*)?"
REFUSAL = ("gRPC and gRPC-Web are served with the Protobuf codec only: send content-type "
           "application/grpc (gRPC-Web: application/grpc-web+proto)")
# google.rpc.Code INVALID_ARGUMENT, as the Connect protocol's JSON refusal has it.
REFUSAL_STATUS = "3"
# google.rpc.Code RESOURCE_EXHAUSTED: a request over a size bound.
RESOURCE_EXHAUSTED = "8"
# Native gRPC alone (not gRPC-Web), whose clients read a status only from grpc-status.
NATIVE_GRPC_CONTENT_TYPES = r"(?i)application/grpc(\+proto)?\s*(;.*)?"
# google.rpc.Code UNIMPLEMENTED: what gRPC answers a message compressed by an algorithm the
# server does not take (gRPC's compression spec), and what the server's own port answers.
UNIMPLEMENTED = "12"
COMPRESSED_REFUSAL = ("requests are served uncompressed only: send messages without "
                      "compression, with no grpc-encoding header (or grpc-encoding: identity); "
                      "turn request compression off in the client")


def refusal_route() -> dict[str, Any]:
    """The route answering a call to a gRPC path whose gRPC or gRPC-Web content type names
    another codec than Protobuf."""
    return trailers_only_refusal([
        {"name": "content-type", "string_match": {"prefix": "application/grpc",
                                                  "ignore_case": True}},
        {"name": "content-type", "string_match": {"safe_regex": {
            "regex": PROTOBUF_CONTENT_TYPES}}, "invert_match": True},
    ], REFUSAL)


def compressed_request_route() -> dict[str, Any]:
    """The route answering a gRPC or gRPC-Web call whose grpc-encoding names a compression
    (gzip, deflate...): UNIMPLEMENTED in gRPC's own form with COMPRESSED_REFUSAL, and
    `grpc-accept-encoding: identity`, as gRPC's compression spec has a server say which
    algorithms it takes. A message of a few kilobytes inflated to the server's whole message
    limit (about 1000 times as much to hold and parse); nothing is decompressed now."""
    route = trailers_only_refusal([
        {"name": "content-type", "string_match": {"prefix": "application/grpc",
                                                  "ignore_case": True}},
        *encoded("grpc-encoding"),
    ], COMPRESSED_REFUSAL, UNIMPLEMENTED, paths={"prefix": "/"})  # the gRPC routes' prefixes too
    route["response_headers_to_add"].append(replaced_header("grpc-accept-encoding", "identity"))
    return route


# gRPC's form of a call's deadline (its HTTP/2 spec): 1 to 8 digits and a unit.
TIMEOUT_FORM = "[0-9]{1,8}[HMSmun]"
MALFORMED_TIMEOUT = ("grpc-timeout: must be 1 to 8 digits and a unit (H, M, S, m, u or n), "
                     "as gRPC writes a deadline")


def malformed_timeout_route() -> dict[str, Any]:
    """The route answering any request whose `grpc-timeout` is not of gRPC's form
    (TIMEOUT_FORM) INVALID_ARGUMENT in gRPC's own form, before anything reaches the server.
    Passed on, one such call (`zzz`) broke the front door's connection to the server for
    every call after it that carried a deadline: 35-50 % failed INTERNAL ("Error parsing
    'grpc-timeout' metadata") until a restart. Whatever its path and content type: Envoy
    passes the header on from a Connect call (unary or stream), a REST one, a health check
    and a path the gRPC routes take by prefix alike (a review), and no client of ours sends
    it otherwise than in gRPC's form."""
    return trailers_only_refusal([
        {"name": "grpc-timeout", "present_match": True},
        {"name": "grpc-timeout", "string_match": {"safe_regex": {"regex": TIMEOUT_FORM}},
         "invert_match": True},
    ], MALFORMED_TIMEOUT, paths={"prefix": "/"})


def trailers_only_refusal(headers: list[dict[str, Any]], message: str,
                          status: str = REFUSAL_STATUS,
                          paths: dict[str, Any] | None = None) -> dict[str, Any]:
    """A route answering a call to a gRPC path (or to `paths`, a route match's path part)
    whose headers match `headers` with the google.rpc.Code `status` (INVALID_ARGUMENT) and
    `message`, in gRPC's own form, reaching nothing."""
    return {
        "match": {**(paths or {"safe_regex": {"regex": RPC_PATHS}}), "headers": headers},
        # Empty, so Envoy sends the headers alone: gRPC's trailers-only answer, which gRPC
        # and gRPC-Web clients both read the status from.
        "direct_response": {"status": 200},
        "response_headers_to_add": [replaced_header("grpc-status", status),
                                    replaced_header("grpc-message", message)],
        "typed_per_filter_config": REFUSAL_FILTERS,
    }

