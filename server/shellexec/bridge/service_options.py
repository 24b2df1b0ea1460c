"""How the bridge reaches the service (`--server`, `--token`), checked before the agent starts.

gRPC takes far more than HOST:PORT as a target, and reports a bad one late or not at all: an
empty target fails only at the first call ("Failed to create channel to ''"), a port above
65535 is taken modulo 65536 (`127.0.0.1:86836` reached the service on port 21300), and
`http://host:port` is a name it keeps failing to resolve, which read as an outage for the whole
`--retry-for`. A token holding a line break or a character outside ASCII (`$(cat token.txt)`
of a file with Windows line endings) cannot go into a header, and failed inside gRPC after the
agent had started. So both are checked first, as usage errors; a message about the token says
what is wrong with it, never what it is. The token's rule is the Python client's own
(`shellexec.client._auth.token_problem`), which refuses such a token when a client is made.
"""

from __future__ import annotations

import ipaddress
import re
from typing import Final

from shellexec.client._auth import token_problem

__all__ = ["ADDRESS_FORM", "MAX_PORT", "address_problem", "token_problem"]

MAX_PORT: Final = 65_535
# A host name: labels of letters, digits, `-` and `_` (a container's service name), joined by
# dots; at most 253 characters (DNS).
_HOST_NAME: Final = re.compile(r"[A-Za-z0-9_](?:[A-Za-z0-9_-]*[A-Za-z0-9_])?"
                               r"(?:\.[A-Za-z0-9_](?:[A-Za-z0-9_-]*[A-Za-z0-9_])?)*\.?",
                               re.ASCII)
_MAX_HOST_CHARS: Final = 253
# The schemes gRPC reads at the start of a target. `unix:/path` split at its last colon read
# as host `unix` and port `/path`, and `ipv4:1.2.3.4:5` as an IPv6 address without brackets.
_GRPC_TARGET_SCHEME: Final = re.compile(
    r"(unix|unix-abstract|vsock|dns|ipv4|ipv6|xds|google-c2p):", re.IGNORECASE)
ADDRESS_FORM: Final = ("HOST:PORT, such as 127.0.0.1:50051, [::1]:50051 or "
                       "shellexec.example.com:443")


def address_problem(value: str) -> str | None:
    """Why `value` is no HOST:PORT the bridge can call (a name, an IPv4 address or an IPv6
    address in brackets, and a port from 1 to 65535), or None when it is one."""
    scheme = _GRPC_TARGET_SCHEME.match(value)
    if scheme:
        return (f"a gRPC target with a scheme ({scheme.group(1)}:), which the bridge does "
                "not take: give HOST:PORT alone")
    if "://" in value:
        return "a URL: give HOST:PORT alone, without a scheme; for TLS add --tls or --tls-ca"
    host, colon, port = value.rpartition(":")
    if not colon:
        return "no :PORT"
    if not host:
        return "no HOST"
    if not (port.isascii() and port.isdigit() and len(port) <= 5
            and 1 <= int(port) <= MAX_PORT):
        return f"the port must be a number from 1 to {MAX_PORT}"
    return _host_problem(host)


def _host_problem(host: str) -> str | None:
    if host.startswith("[") and host.endswith("]"):
        try:
            ipaddress.IPv6Address(host[1:-1])
        except ValueError:
            return "the host in brackets is no IPv6 address"
        return None
    if ":" in host:
        return "an IPv6 address goes in brackets: [::1]:50051"
    if len(host) > _MAX_HOST_CHARS or not _HOST_NAME.fullmatch(host):
        return "the host must be a name or an IP address"
    if host.rstrip(".").replace(".", "").isdigit():  # all digits: it must be an address
        try:
            ipaddress.IPv4Address(host)
        except ValueError:
            return "the host is no IPv4 address"
    return None
