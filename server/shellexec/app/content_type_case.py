"""Protobuf content types in any case, as parts of the rendered Envoy configuration.

A media type is case-insensitive (RFC 9110, section 8.3.1), but Envoy compares content types
with its own lowercase spellings, parameters included: its gRPC-Web filter knows exactly
`application/grpc-web`, `application/grpc-web-text` and their `+proto` forms; a request is
gRPC when its type is `application/grpc` or starts with `application/grpc+`; the Connect
bridge looks for `application/` and `application/connect+`. Any other spelling of these types
(`Application/GRPC-Web+Proto`, `application/grpc-web+proto; charset=utf-8`) passed every filter
and got the transcoder's 404 for an unknown REST path. On the gRPC paths:

- **gRPC-Web and Connect** calls with a Protobuf content type in any case or with parameters
  are rewritten, before the gRPC-Web filter, to the spelling Envoy knows (and a gRPC-Web text
  call's `accept`, which chooses the answer's encoding), so they reach the service as the
  lowercase ones do. Their filters also turn Envoy's own errors into their protocol's form,
  as for the lowercase spelling.
- **Native gRPC** spelled otherwise (`Application/GRPC`, `application/grpc; charset=utf-8`) is
  refused in gRPC's own form, INVALID_ARGUMENT naming the lowercase types. It could be
  rewritten too, but Envoy decides whether its own error replies (the token check's 401, a 503
  while the server is down) take gRPC's form from the headers as they arrived, so such a call
  would get bare HTTP errors.

Other codecs are left to ADR 0121's route (`grpc_codecs`). See ADR 0134.
"""

from __future__ import annotations

from typing import Any

from shellexec.app.connect_protocol import RPC_PATHS
from shellexec.app.envoy_headers import replaced_header
from shellexec.app.grpc_codecs import trailers_only_refusal

# Parameters after `;` (these types define none) and the spaces before them.
_PARAMETERS = r"\s*(;.*)?"
# On the gRPC paths, each Protobuf content type of gRPC-Web and Connect in any case and with
# any parameters -> the spelling Envoy's filters know. No two patterns match the same value.
CONTENT_TYPES: tuple[tuple[str, str], ...] = (
    (r"(?i)application/grpc-web-text(\+proto)?" + _PARAMETERS, "application/grpc-web-text+proto"),
    (r"(?i)application/grpc-web(\+proto)?" + _PARAMETERS, "application/grpc-web+proto"),
    (r"(?i)application/proto" + _PARAMETERS, "application/proto"),  # Connect, unary
    (r"(?i)application/connect\+proto" + _PARAMETERS, "application/connect+proto"),  # streams
)
# A gRPC-Web call asks for a base64 answer with this `accept`, which Envoy compares the same way.
TEXT_ACCEPT: tuple[tuple[str, str], ...] = (CONTENT_TYPES[0],)

# Native gRPC with Protobuf, in any case and with any parameters ...
GRPC_PROTOBUF = r"(?i)application/grpc(\+proto)?" + _PARAMETERS
# ... and what Envoy takes for gRPC (`application/grpc+PROTO` is one: it reaches the service).
ENVOY_GRPC = r"application/grpc(\+.*)?"
REFUSAL = ("the gRPC content type is matched in lowercase and without parameters: send "
           "content-type application/grpc or application/grpc+proto")

_MATCHING = "type.googleapis.com/envoy.extensions.common.matching.v3.ExtensionWithMatcher"
_COMPOSITE = "type.googleapis.com/envoy.extensions.filters.http.composite.v3."
_HEADER_INPUT = "type.googleapis.com/envoy.type.matcher.v3.HttpRequestHeaderMatchInput"
_HEADER_MUTATION = ("type.googleapis.com/envoy.extensions.filters.http.header_mutation.v3."
                    "HeaderMutation")


def _header_is(header: str, pattern: str) -> dict[str, Any]:
    """A matcher predicate: `header` matches `pattern` whole (RE2, which xDS matchers name)."""
    return {"single_predicate": {
        "input": {"name": header, "typed_config": {"@type": _HEADER_INPUT,
                                                   "header_name": header}},
        "value_match": {"safe_regex": {"google_re2": {}, "regex": pattern}}}}


def _rewrite(header: str, pattern: str, value: str) -> dict[str, Any]:
    """A matcher: when `header` matches `pattern`, a header mutation sets it to `value`."""
    mutation = {"mutations": {"request_mutations": [
        {"append": replaced_header(header, value)}]}}
    return {
        "predicate": _header_is(header, pattern),
        "on_match": {"action": {"name": f"{header}: {value}", "typed_config": {
            "@type": _COMPOSITE + "ExecuteFilterAction",
            "typed_config": {"name": "envoy.filters.http.header_mutation",
                             "typed_config": {"@type": _HEADER_MUTATION, **mutation}}}}},
    }


def _filter(name: str, header: str, table: tuple[tuple[str, str], ...]) -> dict[str, Any]:
    """An HTTP filter rewriting `header` on a gRPC path by the first row of `table` (a pattern
    and its value) it matches, and leaving every other request alone."""
    rows = {"matcher_list": {"matchers": [
        _rewrite(header, pattern, value) for pattern, value in table]}}
    on_rpc_path = {"predicate": _header_is(":path", RPC_PATHS + r"(\?.*)?"),
                   "on_match": {"matcher": rows}}
    return {"name": name, "typed_config": {
        "@type": _MATCHING,
        "extension_config": {"name": "envoy.filters.http.composite",
                             "typed_config": {"@type": _COMPOSITE + "Composite"}},
        "xds_matcher": {"matcher_list": {"matchers": [on_rpc_path]}},
    }}


def filters() -> list[dict[str, Any]]:
    """The HTTP filters (after CORS, before gRPC-Web) writing a gRPC-Web or Connect call's
    content type, and a gRPC-Web text call's `accept`, as Envoy's filters know them."""
    return [_filter("shellexec.content_type_case", "content-type", CONTENT_TYPES),
            _filter("shellexec.accept_case", "accept", TEXT_ACCEPT)]


def refusal_route() -> dict[str, Any]:
    """The route answering a call to a gRPC path whose native gRPC Protobuf content type is
    not spelled as Envoy knows it."""
    return trailers_only_refusal([
        {"name": "content-type", "string_match": {"safe_regex": {"regex": GRPC_PROTOBUF}}},
        {"name": "content-type", "string_match": {"safe_regex": {"regex": ENVOY_GRPC}},
         "invert_match": True},
    ], REFUSAL)
