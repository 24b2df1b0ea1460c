"""The errors Envoy answers itself, made `{"code": N, "message": "..."}` JSON like the API's.

Two parts of the rendered configuration: the local reply mappers (Envoy's own replies, such as
the transcoder's 404 and 400, the buffer filter's 413 or a 503 while the server is down, get a
JSON body and the gRPC code matching their status) and the 405 routes (a known path asked with
a method it does not serve). Errors the server returns through `convert_grpc_status` are not
local replies, so they keep their own body. See ADR 0040.

The token check's 401 says why as the server's refusals do (ADR 0050): its reason, kept by
Envoy as the check filter's dynamic metadata (`token_check.DETAILS_HEADERS`), becomes the REST
body's `details` and a gRPC or gRPC-Web call's `grpc-status-details-bin`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from google.rpc import error_details_pb2

from shellexec.api.error_details import STATUS_DETAILS_KEY
from shellexec.app import token_check
from shellexec.app.envoy_headers import replaced_header
from shellexec.app.rest_bindings import PathTemplate, RestBinding
from shellexec.vocabulary import ERROR_DOMAIN

# HTTP status of a local reply -> the gRPC code in its body (google.rpc.Code numbers). Other
# statuses from 400 up get UNKNOWN (2).
GRPC_CODE_BY_STATUS = {
    400: 3,   # INVALID_ARGUMENT: malformed JSON, a bad or unknown query parameter
    401: 16,  # UNAUTHENTICATED: no valid bearer token (the front door's token check)
    404: 5,   # NOT_FOUND: no such path
    403: 7,   # PERMISSION_DENIED: a cross-site request (the browser boundary, ADR 0055)
    405: 12,  # UNIMPLEMENTED: the path exists, the method does not (gRPC's unknown method)
    408: 4,   # DEADLINE_EXCEEDED
    413: 8,   # RESOURCE_EXHAUSTED: body over the limit (gRPC's own over-size code)
    415: 3,   # INVALID_ARGUMENT: a browser request with a form or text content type
    421: 7,   # PERMISSION_DENIED: a Host the front door does not serve (DNS rebinding)
    429: 8,   # RESOURCE_EXHAUSTED
    431: 8,   # RESOURCE_EXHAUSTED: headers too large
    500: 13,  # INTERNAL
    502: 14,  # UNAVAILABLE
    503: 14,  # UNAVAILABLE: the server is down or overloaded
    504: 4,   # DEADLINE_EXCEEDED
}
UNKNOWN_CODE = 2

_BODY = "%LOCAL_REPLY_BODY%"
# The answer to a call refused because the front door's pool for its kind of call is full.
POOL_FULL = ("the front door is carrying as many calls of this kind to the servers as it may "
             "at once (its pool is full); try again shortly")
# The answer to a call whose token could not be checked: the check's server did not answer, or
# its database did not (the token check answers 503 then, which Envoy takes for a failed check
# and answers with a 503 of its own, without the check's text).
CHECK_UNAVAILABLE = ("the front door could not check the token: the server or its database is "
                     "unavailable, or more checks are waiting than the front door holds; try "
                     "again shortly")
# A 405's body is a direct response, hence static: it names what is allowed; add the method.
_MESSAGES = {405: f"method %REQ(:METHOD)% not allowed: {_BODY}"}

_TRANSCODER = "envoy.filters.http.grpc_json_transcoder"
# The per-filter configuration of a route whose requests reach no server: no token is needed
# and the buffer holds no body (it would wait for the body of a stream that never ends, or
# hold one nobody reads; ADR 0119).
UNHELD_FILTERS = {
    **token_check.CHECK_OFF,
    "envoy.filters.http.buffer": {
        "@type": "type.googleapis.com/envoy.extensions.filters.http.buffer.v3.BufferPerRoute",
        "disabled": True},
}
# The per-filter configuration of a route under /api/ that Envoy answers itself: the
# transcoder has no part (it would answer first, 404 "Could not resolve"), and the token
# check still comes first (docs/api.md: without a valid token, even a path the front door
# refuses itself is answered 401).
TRANSCODER_OFF = {_TRANSCODER: {
    "@type": "type.googleapis.com/envoy.config.route.v3.FilterConfig", "disabled": True}}
# ... and of a route Envoy answers itself outside the API (the web page's files, the OpenAPI
# document, the browser boundary's and the Connect refusals): no token, no held body, and no
# transcoder either (it would answer first, or pass the request on).
REFUSAL_FILTERS = {**UNHELD_FILTERS, **TRANSCODER_OFF}

# Native gRPC and gRPC-Web calls carry their errors in grpc-status / grpc-message: leave their
# local replies alone. A transcoded REST call also has a gRPC content type by the time it fails,
# but the transcoder has then set x-envoy-original-path.
_REST_REQUESTS = {"or_filter": {"filters": [
    {"header_filter": {"header": {"name": "x-envoy-original-path", "present_match": True}}},
    {"header_filter": {"header": {
        "name": "content-type", "string_match": {"prefix": "application/grpc"},
        "invert_match": True, "treat_missing_header_as_empty": True}}},
]}}


# The type URL of an ErrorInfo, as the server's details name it (`@type` in the REST body,
# `type` in Connect's).
ERROR_INFO_TYPE = f"type.googleapis.com/{error_details_pb2.ErrorInfo.DESCRIPTOR.full_name}"
_GRPC_REQUESTS = {"and_filter": {"filters": [
    {"header_filter": {"header": {"name": "x-envoy-original-path", "present_match": True,
                                  "invert_match": True}}},
    {"header_filter": {"header": {"name": "content-type",
                                  "string_match": {"prefix": "application/grpc"}}}},
]}}


def check_detail(header: str) -> str:
    """The command operator Envoy replaces with what the token check's refusal said in
    `header` (one of `token_check.DETAILS_HEADERS`)."""
    return f"%DYNAMIC_METADATA({token_check.FILTER_NAME}:{header})%"


def token_refusal_filter() -> dict[str, Any]:
    """A local reply filter matching the token check's 401 when the check said why (a check
    of this release always does)."""
    said = {"metadata_filter": {"matcher": {
        "filter": token_check.FILTER_NAME, "path": [{"key": token_check.REASON_HEADER}],
        "value": {"present_match": True}}, "match_if_key_not_found": False}}
    return {"and_filter": {"filters": [status_filter("EQ", 401), said]}}


def _token_refusal_mappers() -> list[dict[str, Any]]:
    """The token check's 401 with its reason: over REST, the `{code, message, details}` body
    of the server's errors, with the ErrorInfo; over gRPC and gRPC-Web (the gRPC-Web filter
    has made a call gRPC by then), the message stays grpc-message and the details are
    grpc-status-details-bin, as the server sends them. Connect's has its own shape
    (`connect_protocol`)."""
    refused = token_refusal_filter()
    info = {"@type": ERROR_INFO_TYPE, "reason": check_detail(token_check.REASON_HEADER),
            "domain": ERROR_DOMAIN, "metadata": {}}
    rest = {"filter": {"and_filter": {"filters": [refused, _REST_REQUESTS]}},
            "body_format_override": {
                "json_format": {"code": GRPC_CODE_BY_STATUS[401], "message": _BODY,
                                "details": [info]},
                "content_type": "application/json"}}
    grpc = {"filter": {"and_filter": {"filters": [refused, _GRPC_REQUESTS]}},
            "headers_to_add": [replaced_header(
                STATUS_DETAILS_KEY, check_detail(token_check.STATUS_DETAILS_HEADER))]}
    return [rest, grpc]


def status_filter(op: str, status: int) -> dict[str, Any]:
    """A local reply filter on the reply's HTTP status (`op`: "EQ", "GE", ...)."""
    value = {"default_value": status, "runtime_key": "front_door.local_reply_status"}
    return {"status_code_filter": {"comparison": {"op": op, "value": value}}}


def _mapper(condition: dict[str, Any], code: int, message: str = _BODY) -> dict[str, Any]:
    return {
        "filter": {"and_filter": {"filters": [condition, _REST_REQUESTS]}},
        "body_format_override": {
            "json_format": {"code": code, "message": message},
            "content_type": "application/json",
        },
    }


def _pool_full_mappers() -> list[dict[str, Any]]:
    """A call Envoy's circuit breaker refused (response flag UO: the pool of its kind of call
    is full, ADR 0139) says so, over REST and in gRPC's grpc-message alike, instead of Envoy's
    "upstream connect error ... reset reason: overflow", which reads as a server fault."""
    overflow = {"response_flag_filter": {"flags": ["UO"]}}
    return [_mapper(overflow, GRPC_CODE_BY_STATUS[503], POOL_FULL),
            {"filter": overflow, "body": {"inline_string": POOL_FULL}}]


def _check_unavailable_mappers() -> list[dict[str, Any]]:
    """A call refused because its token could not be checked (response flag UAEX, which a
    refused token's 401 has too, with a 503) says why, over REST and in grpc-message alike,
    instead of an empty message."""
    failed_check = {"and_filter": {"filters": [
        {"response_flag_filter": {"flags": ["UAEX"]}}, status_filter("EQ", 503)]}}
    return [_mapper(failed_check, GRPC_CODE_BY_STATUS[503], CHECK_UNAVAILABLE),
            {"filter": failed_check, "body": {"inline_string": CHECK_UNAVAILABLE}}]


# What a gRPC or gRPC-Web call whose request was not sent whole in time is told: the server's
# own words for it (`request_budget`), where Envoy said only "request timeout".
REQUEST_NOT_SENT = "the call's request did not end within the time the front door waits for it"


def _request_timeout_mappers() -> list[dict[str, Any]]:
    """A gRPC or gRPC-Web call whose request did not end in time (Envoy's `request_timeout`,
    408) ends DEADLINE_EXCEEDED, as the server ends one on its own port, instead of the
    UNKNOWN Envoy derives from a 408. The server waits as long, so which of the two answered
    such a call through the front door was a race."""
    timed_out = {"and_filter": {"filters": [status_filter("EQ", 408), _GRPC_REQUESTS]}}
    # gRPC's trailers-only answer, whole: HTTP 200, its content type, the status and message
    # in headers and no body. The gRPC-Web filter writes a status of its own over any other
    # answer (UNKNOWN for a 408), and would pass a body on as if it were messages.
    return [{"filter": timed_out, "status_code": 200,
             "headers_to_add": [replaced_header("content-type", "application/grpc"),
                                replaced_header("grpc-status", str(GRPC_CODE_BY_STATUS[408])),
                                replaced_header("grpc-message", REQUEST_NOT_SENT)],
             "body": {"inline_string": ""}}]


def local_reply_config(leading: Sequence[dict[str, Any]] = ()) -> dict[str, Any]:
    """HttpConnectionManager `local_reply_config`: every local error reply becomes JSON.

    `leading` mappers are tried first (Envoy uses the first that matches): the Connect
    refusals' own body (`connect_protocol`). Successful local replies (the web page's direct
    responses) match no mapper and no default body format, so they are served as they are.
    """
    by_status = [_mapper(status_filter("EQ", status), code, _MESSAGES.get(status, _BODY))
                 for status, code in GRPC_CODE_BY_STATUS.items()]
    any_other = _mapper(status_filter("GE", 400), UNKNOWN_CODE)
    return {"mappers": [*leading, *_pool_full_mappers(), *_check_unavailable_mappers(),
                        *_token_refusal_mappers(), *_request_timeout_mappers(), *by_status,
                        any_other]}


def allowed_methods(bindings: Sequence[RestBinding], binding: RestBinding) -> list[str]:
    """The methods a path of `binding`'s template may be asked with: its own and those of every
    template that could match the same path, so no 405 route shadows a served method."""
    return sorted({other.method for other in bindings
                   if other.template.may_overlap(binding.template)})


def _method_not_allowed_route(binding: RestBinding, allowed: list[str]) -> dict[str, Any]:
    return {
        "match": {"safe_regex": {"regex": binding.template.regex}, "headers": [{
            "name": ":method", "string_match": {"safe_regex": {"regex": "|".join(allowed)}},
            "invert_match": True}]},
        "direct_response": {"status": 405, "body": {
            "inline_string": f"{binding.template.text} accepts {' and '.join(allowed)}"}},
        "response_headers_to_add": [replaced_header("allow", ", ".join(allowed))],
        # Otherwise the transcoder would answer first, with 404 "Could not resolve".
        "typed_per_filter_config": TRANSCODER_OFF,
    }


def _query_collision_route(binding: RestBinding, field: str) -> dict[str, Any]:
    return {
        "match": {"safe_regex": {"regex": binding.template.regex},
                  "query_parameters": [{"name": field, "present_match": True}]},
        "direct_response": {"status": 400, "body": {
            "inline_string": f"{field}: is named by the path; do not repeat it in the query"}},
        "typed_per_filter_config": TRANSCODER_OFF,
    }


EMPTY_SEGMENT_MESSAGE = "no such path: a REST path has no empty segment (a trailing or doubled /)"


def empty_segment_route(bindings: Sequence[RestBinding]) -> dict[str, Any]:
    """404 for a REST path with an empty segment: a trailing `/`, a doubled one, or one before
    a custom verb of `bindings` (`.../messages/:watch`). The transcoder's path matcher skips
    empty segments, so `/api/v1/task-sessions/A/` and `...//A` were served as the session's own
    path, where the contract answers 404 for a path it does not name (and a wrong method on
    them got 404 where the path's own gets 405). Only the verbs are matched after a `/`: a task
    id may start with `:`."""
    verbs = sorted({re.escape(binding.template.verb) for binding in bindings
                    if binding.template.verb})
    before_verb = f"|.*/:({'|'.join(verbs)})" if verbs else ""
    return {"match": {"safe_regex": {"regex": f"/api/(.*//.*|.*/{before_verb})"}},
            "direct_response": {"status": 404, "body": {"inline_string": EMPTY_SEGMENT_MESSAGE}},
            "typed_per_filter_config": TRANSCODER_OFF}


# The path fields whose values may hold `:` (a task id's characters include it); the ids the
# server makes never do, and any other value of theirs is NOT_FOUND, as an unknown id is.
COLON_FIELDS = frozenset({"task_id"})


def verb_like_value_routes(bindings: Sequence[RestBinding]) -> list[dict[str, Any]]:
    """400 for a path whose last segment is the value of a field that may hold `:`
    (COLON_FIELDS) ending in `:VERB`, one of the API's custom verbs (`DELETE
    /api/v1/tasks/ns:complete`), where no template serves that verb. The transcoder reads
    the `:complete` as the verb and then finds no method: 404 "Could not resolve", which a
    client deleting the task takes for "already gone". Such a value is valid, so the answer
    says how to send it: the colon escaped, which the transcoder reads as part of the
    value."""
    verbs = sorted({binding.template.verb for binding in bindings if binding.template.verb})
    routes: dict[str, dict[str, Any]] = {}
    for binding in bindings:
        template = binding.template
        last = template.segments[-1]
        if (template.verb or template.any_depth or last.literal is not None
                or template.variables[-1] not in COLON_FIELDS):
            continue
        unserved = [verb for verb in verbs if not any(
            other.template.verb == verb
            and other.template.may_overlap(PathTemplate.parse(f"{template.text}:{verb}"))
            for other in bindings)]
        if unserved and template.text not in routes:
            routes[template.text] = _verb_like_value_route(template, unserved)
    return list(routes.values())


def _verb_like_value_route(template: PathTemplate, verbs: list[str]) -> dict[str, Any]:
    field = template.variables[-1]
    parent = PathTemplate.parse(template.text.rsplit("/", 1)[0])  # all but the field's value
    alternatives = "|".join(re.escape(verb) for verb in verbs)
    # `*`: a value may be the verb alone after its `:` (a task id may start with `:`).
    regex = f"{parent.regex.removesuffix('$')}/[^/]*:({alternatives})$"
    named = ", ".join(f":{verb}" for verb in verbs)
    message = (f"{field}: a value that ends in one of the API's verbs ({named}) must be sent "
               "with that ':' written as %3A in the path; unescaped, the front door reads it "
               "as a verb")
    return {"match": {"safe_regex": {"regex": regex}},
            "direct_response": {"status": 400, "body": {"inline_string": message}},
            "typed_per_filter_config": TRANSCODER_OFF}


def query_collision_routes(bindings: Sequence[RestBinding]) -> list[dict[str, Any]]:
    """One route per path template and field it binds, answering 400 when the query names
    that field too. The transcoder would let `?session_id=B` override the path's session A
    (its `reject_binding_body_field_collisions` covers only the body); the path names the
    resource (ADR 0044)."""
    routes: dict[tuple[str, str], dict[str, Any]] = {}
    for binding in bindings:
        for field in binding.template.variables:
            key = (binding.template.regex, field)
            if key not in routes:
                routes[key] = _query_collision_route(binding, field)
    return list(routes.values())


def method_not_allowed_routes(bindings: Sequence[RestBinding]) -> list[dict[str, Any]]:
    """One route per distinct path template answering 405 to the methods it does not serve."""
    routes: dict[str, dict[str, Any]] = {}
    for binding in bindings:
        if binding.template.regex not in routes:
            routes[binding.template.regex] = _method_not_allowed_route(
                binding, allowed_methods(bindings, binding))
    return list(routes.values())
