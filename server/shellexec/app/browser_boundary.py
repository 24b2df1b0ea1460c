"""The front door's browser boundary, as parts of the rendered Envoy configuration.

- The Host values Envoy answers: the listener's loopback names and port, and the configured
  ones. Any other Host (a DNS-rebinding page's `evil.example:8080`) lands on a virtual host
  that answers 421 to everything.
- Guard routes, first in the API's virtual host, refusing what a web page on another origin
  could send before anything reaches the service: an `Origin` not on the allow-list (403), a
  `Sec-Fetch-Site: cross-site` request that is not a top-level navigation to the page (403),
  and a browser request (one with an `Origin`) with a form or text content type, which a page
  may send without a CORS preflight (415). Requests without an `Origin` (curl, services)
  pass.
- Security headers on every answer (Content-Security-Policy and friends), set by a header
  mutation filter first in the chain, so Envoy's own replies carry them too.

See ADR 0055 (the boundary) and ADR 0057 (the headers).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from shellexec.app.envoy_headers import replaced_header
from shellexec.app.front_door_errors import REFUSAL_FILTERS
from shellexec.app.ports import MAX_PORT

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")
_WILDCARD_HOSTS = ("", "0.0.0.0", "::", "[::]")
# Ports a browser leaves out of Host (http, https).
_DEFAULT_PORTS = (80, 443)
_HOST = re.compile(r"(?P<name>[a-z0-9]([a-z0-9.-]*[a-z0-9])?|\[[0-9a-f:.]+\])"
                   r"(:(?P<port>[1-9][0-9]{0,4}))?")

# Content types a page may send cross-origin without a CORS preflight ("simple requests").
FORM_CONTENT_TYPES = ("application/x-www-form-urlencoded", "multipart/form-data", "text/plain")
# Paths of the API and of gRPC; everything else is the web page's files.
_SERVICE_PATHS = r"/(api/|shellexec\.|grpc\.).*"
_GRPC_PATHS = r"/(shellexec\.|grpc\.).*"

CONTENT_SECURITY_POLICY = "; ".join((
    "default-src 'self'", "script-src 'self'", "style-src 'self'", "img-src 'self' data:",
    "connect-src 'self'", "object-src 'none'", "frame-ancestors 'none'", "base-uri 'none'",
    "form-action 'self'",
))
SECURITY_HEADERS = {
    "content-security-policy": CONTENT_SECURITY_POLICY,
    "x-content-type-options": "nosniff",
    "x-frame-options": "DENY",
    "referrer-policy": "no-referrer",
}

class AllowedHostError(ValueError):
    """A configured allowed host is not a host name or address with an optional port."""


def _with_port(name: str, port: int) -> list[str]:
    return [f"{name}:{port}", *([name] if port in _DEFAULT_PORTS else [])]


def _configured(value: str, port: int, setting: str = "SHELLEXEC_ALLOWED_HOSTS") -> list[str]:
    match = _HOST.fullmatch(value.lower())
    if match is None or (match["port"] and not 0 < int(match["port"]) <= MAX_PORT):
        raise AllowedHostError(
            f"{setting} must name a host or host:port (e.g. shellexec.internal or "
            f"10.0.0.5:8080; no wildcard), not {value[:64]!r}")
    return [match[0]] if match["port"] else _with_port(match["name"], port)


def loopback_hosts(port: int) -> list[str]:
    """The Host values naming this machine's loopback listener on `port` (bare names only on
    the default ports, as browsers send them): all a listener serving only this machine should
    answer, so that a page on a name rebound to 127.0.0.1 (DNS rebinding) is refused."""
    return [host for name in LOOPBACK_NAMES for host in _with_port(name, port)]


def allowed_hosts(rest_host: str, rest_port: int, configured: Iterable[str]) -> list[str]:
    """The Host values the front door answers, as Envoy virtual host domains: the loopback
    names with the listener's port, the listener's own address when it is a specific one,
    and each configured value (a value without a port gets the listener's)."""
    hosts = loopback_hosts(rest_port)
    if rest_host not in _WILDCARD_HOSTS:
        bare_v6 = ":" in rest_host and not rest_host.startswith("[")
        name = f"[{rest_host}]" if bare_v6 else rest_host
        hosts += _configured(name, rest_port, "SHELLEXEC_REST_HOST")
    for value in configured:
        hosts += _configured(value, rest_port)
    return list(dict.fromkeys(hosts))


# A browser's serialized origin: a scheme, a host, and a port only when not the scheme's default.
_ORIGIN = re.compile(r"(?P<scheme>[a-z][a-z0-9+.-]*)://(?P<host>[^/?#@:\[\]]+|\[[^/?#@\]]+\])"
                     r"(:(?P<port>\d{1,5}))?")
_DEFAULT_PORT_OF = {"http": "80", "https": "443"}


def cors_origin(value: str) -> str:
    """A CORS origin as the browser sends it in `Origin` (lower case, a default port left
    out), or ValueError: the match is exact, so `*`, `null`, a path or a trailing slash would
    silently match nothing, or (`null`) every sandboxed frame."""
    match = _ORIGIN.fullmatch(value.lower())
    if match is None or _HOST.fullmatch(match["host"]) is None or (
            match["port"] and not 0 < int(match["port"]) <= MAX_PORT):
        raise ValueError(
            "SHELLEXEC_CORS_ORIGINS must list origins, each a scheme, a host and an optional "
            "port such as https://dash.example or http://10.0.0.5:3000 (no path, no trailing "
            f"slash, no wildcard), not {value[:64]!r}")
    port = match["port"]
    if port is None or _DEFAULT_PORT_OF.get(match["scheme"]) == port:
        return f"{match['scheme']}://{match['host']}"
    return f"{match['scheme']}://{match['host']}:{int(port)}"


def allowed_origins(hosts: Iterable[str], cors_origins: Iterable[str]) -> list[str]:
    """The page's own origins (over http or https) on every allowed host, then the CORS
    origins."""
    own = [f"{scheme}://{host}" for host in hosts for scheme in ("http", "https")]
    return list(dict.fromkeys([*own, *cors_origins]))


def _off_list(origins: Sequence[str]) -> list[dict[str, Any]]:
    """Header matchers (all must match) for an Origin off the list, a missing one included.
    Exact matches, not one regex: Envoy caps a regex's size."""
    return [{"name": "origin", "string_match": {"exact": origin}, "invert_match": True,
             "treat_missing_header_as_empty": True} for origin in origins]


def _refusal(match: dict[str, Any], status: int, message: str) -> dict[str, Any]:
    return {"match": match,
            "direct_response": {"status": status, "body": {"inline_string": message}},
            "typed_per_filter_config": REFUSAL_FILTERS}


def guard_routes(origins: Sequence[str]) -> list[dict[str, Any]]:
    """The routes refusing cross-site requests, in the order they must come first."""
    has_origin = {"name": "origin", "present_match": True}
    cross_site = {"name": "sec-fetch-site", "string_match": {"exact": "cross-site"}}
    # A page on another port of the same host is same-site, yet not this page's origin.
    not_same_origin = {"name": "sec-fetch-site",
                       "string_match": {"safe_regex": {"regex": "cross-site|same-site"}}}
    reading = {"name": ":method", "string_match": {"safe_regex": {"regex": "GET|HEAD"}}}
    not_navigating = {"name": "sec-fetch-mode", "string_match": {"exact": "navigate"},
                      "invert_match": True, "treat_missing_header_as_empty": True}
    off_list = _off_list(origins)
    cross_site_refused = "cross-site request refused (Sec-Fetch-Site: cross-site)"
    return [
        _refusal({"prefix": "/", "headers": [has_origin, *off_list]}, 403,
                 "cross-origin request refused: the Origin is not allowed here"),
        # A link from another site may open the page; nothing else may come cross-site.
        _refusal({"prefix": "/", "headers": [cross_site, *off_list, not_navigating]}, 403,
                 cross_site_refused),
        _refusal({"safe_regex": {"regex": _SERVICE_PATHS},
                  "headers": [not_same_origin, *off_list]}, 403,
                 "request from another site or port refused (Sec-Fetch-Site)"),
        # gRPC, gRPC-Web and Connect clients POST. Connect's GET form would let an <img>,
        # which sends no Origin and no preflight, call any method: DeleteTask included.
        _refusal({"safe_regex": {"regex": _GRPC_PATHS}, "headers": [reading]}, 405,
                 "gRPC methods are called with POST"),
        *(_refusal({"prefix": "/", "headers": [has_origin, {
            "name": "content-type", "string_match": {"prefix": form_type, "ignore_case": True}}]},
            415, f"a browser request must send content-type application/json, not {form_type}")
          for form_type in FORM_CONTENT_TYPES),
    ]


def foreign_host_virtual_host() -> dict[str, Any]:
    """The virtual host for every Host not allowed: 421 (Misdirected Request) to anything."""
    return {"name": "foreign_host", "domains": ["*"], "routes": [_refusal(
        {"prefix": "/"}, 421,
        "this front door does not serve that Host: add it to SHELLEXEC_ALLOWED_HOSTS")]}


def security_headers_filter() -> dict[str, Any]:
    """An HTTP filter (first in the chain) setting SECURITY_HEADERS on every answer."""
    return {
        "name": "envoy.filters.http.header_mutation",
        "typed_config": {
            "@type": "type.googleapis.com/envoy.extensions.filters.http.header_mutation.v3."
                     "HeaderMutation",
            "mutations": {"response_mutations": [
                {"append": replaced_header(key, value)}
                for key, value in SECURITY_HEADERS.items()]},
        },
    }
