"""Telling a TLS failure from an outage in what gRPC reports.

gRPC reports a connection that failed as UNAVAILABLE, whatever the cause. Over TLS, its
details (gRPC Python on BoringSSL) name the handshake's failure:

    failed to connect to all addresses; last error: UNKNOWN: ipv4:127.0.0.1:8080: Tls
    handshake failed (TSI_PROTOCOL_FAILURE): SSL_ERROR_SSL: error:1000007d:SSL
    routines:OPENSSL_internal:CERTIFICATE_VERIFY_FAILED: self signed certificate

Without this the bridge retried an untrusted certificate for the whole `--retry-for` and then
said the service was unreachable, hinting to start it. A certificate that is not trusted, that
does not name the host, or a server that does not speak TLS fail the same way on every attempt
(`definite`); another handshake failure may be the front door restarting, and is retried like
an outage, with a hint about TLS rather than about starting the service.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final


@dataclass(frozen=True, slots=True)
class TlsFailure:
    """What went wrong, said for the user, and whether every attempt will fail alike."""

    what: str
    definite: bool


_UNTRUSTED: Final = TlsFailure(
    "the service's certificate was not trusted: pass --tls-ca with its certificate file (the "
    "front door's SHELLEXEC_TLS_CERT_FILE, or the CA certificate that issued it)", True)
_OTHER_NAME: Final = TlsFailure(
    "the service's certificate does not name the host of --server: use a name or address it "
    "was issued for", True)
_NOT_TLS: Final = TlsFailure(
    "the server at --server does not speak TLS: point --server at the TLS front door's port, "
    "or leave out --tls and --tls-ca", True)
_HANDSHAKE: Final = TlsFailure(
    "the TLS handshake with the service failed: check --server, --tls and --tls-ca", False)

# What the details say, in the order they are looked for (a failed verification also reads
# "handshake failed").
_SIGNS: Final = (
    (("CERTIFICATE_VERIFY_FAILED",), _UNTRUSTED),
    (("Hostname Verification Check failed", "not in peer certificate"), _OTHER_NAME),
    (("WRONG_VERSION_NUMBER",), _NOT_TLS),
    (("andshake failed",), _HANDSHAKE),
)


# How gRPC's own channel words a connection it could not make. Only such details are read:
# a server, or a proxy whose own upstream TLS failed, may answer UNAVAILABLE with any text,
# `CERTIFICATE_VERIFY_FAILED` included, after the bridge's handshake succeeded.
_CHANNEL_FAILURE: Final = "failed to connect to all addresses"


def tls_failure(details: str) -> TlsFailure | None:
    """The TLS failure an UNAVAILABLE's `details` report, or None when they report none, or
    when the channel did not fail itself (the details are then the server's words)."""
    if not details.startswith(_CHANNEL_FAILURE):
        return None
    for signs, failure in _SIGNS:
        if any(sign in details for sign in signs):
            return failure
    return None
