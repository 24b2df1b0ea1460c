"""The start-up rule of authentication: off is allowed on loopback addresses only.

Without tokens anyone who reaches a port reads every session and may write into any, so a
listener another machine can reach must not start unauthenticated (docs/security.md).
"""

from __future__ import annotations

import ipaddress

from shellexec.app.settings import Settings

_LOOPBACK_NAMES = frozenset({"localhost", "ip6-localhost"})


class UnsafeExposureError(RuntimeError):
    """A listener is not on loopback and authentication is off."""


def is_loopback(host: str) -> bool:
    name = host.strip("[]").lower()
    if name in _LOOPBACK_NAMES:
        return True
    try:
        address = ipaddress.ip_address(name)
    except ValueError:  # another host name: it may resolve anywhere
        return False
    # Python 3.11 does not call an IPv4-mapped IPv6 address (::ffff:127.0.0.1) loopback.
    mapped = getattr(address, "ipv4_mapped", None)
    return (mapped or address).is_loopback


def check_exposure(settings: Settings, hosts: dict[str, str]) -> None:
    """Raises UnsafeExposureError when authentication is off and a host of `hosts` (setting
    name -> host the command binds) is not a loopback address."""
    if settings.auth:
        return
    exposed = [f"{name}={host or '(all addresses)'}" for name, host in hosts.items()
               if not is_loopback(host)]
    if exposed:
        raise UnsafeExposureError(
            f"refusing to listen on a non-loopback address ({', '.join(exposed)}) with "
            "authentication off: anyone who can reach it could read and write every session. "
            "Set SHELLEXEC_AUTH=on and create a token with `shellexec token create`, or listen "
            "on 127.0.0.1.")
