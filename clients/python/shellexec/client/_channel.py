"""Opening a client's channel, in plaintext or over TLS, for both clients."""

from __future__ import annotations

import math
import os
from pathlib import Path

import grpc

# What a client is told about TLS: False for plaintext; True to check the server against the
# system's trusted certificates; a PEM file's path, or its bytes, to check it against those
# certificates alone (a self-signed front door's `SHELLEXEC_TLS_CERT_FILE`).
Tls = bool | str | os.PathLike[str] | bytes

_PEM_CERTIFICATE = b"-----BEGIN CERTIFICATE-----"


def channel_credentials(tls: Tls) -> grpc.ChannelCredentials | None:
    """The credentials `tls` asks for, or None for plaintext. A certificate file is read now,
    so a wrong path or a file holding no certificate fails here, naming the file, instead of
    as UNAVAILABLE on every call."""
    if tls is False:
        return None
    if tls is True:
        return grpc.ssl_channel_credentials()
    try:
        roots = pem_certificates(tls)
    except ValueError as refused:
        raise ValueError(f"tls: {refused}") from None
    return grpc.ssl_channel_credentials(root_certificates=roots)


def pem_certificates(source: str | os.PathLike[str] | bytes) -> bytes:
    """The PEM certificates of `source`, a file (read now: OSError if it cannot be) or its
    bytes; ValueError, naming it, when it holds none."""
    roots = source if isinstance(source, bytes) else Path(source).read_bytes()
    if _PEM_CERTIFICATE not in roots:
        named = "the bytes given hold" if isinstance(source, bytes) else f"{Path(source)} holds"
        raise ValueError(f"{named} no PEM certificate")
    return roots


def call_timeout(timeout: float | None) -> float | None:
    """The deadline of each unary call, in seconds: None (no deadline) for 0 or None, as in
    the Go, Java and TypeScript clients (0 failed every call at once with DEADLINE_EXCEEDED).
    A negative or non-finite one is a ValueError now, not a failure of every call."""
    if timeout is None or timeout == 0:
        return None
    if not math.isfinite(timeout):
        raise ValueError(f"timeout: must be a finite number of seconds, got {timeout}")
    if timeout < 0:
        raise ValueError(f"timeout: must not be negative, got {timeout}")
    return timeout
