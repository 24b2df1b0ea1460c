"""Opening a client's channel, in plaintext or over TLS, for both clients."""

from __future__ import annotations

import os
from pathlib import Path

import grpc

# What a client is told about TLS: False for plaintext; True to check the server against the
# system's trusted certificates; a PEM file's path to check it against that file's alone (a
# self-signed front door's `SHELLEXEC_TLS_CERT_FILE`).
Tls = bool | str | os.PathLike[str]

_PEM_CERTIFICATE = b"-----BEGIN CERTIFICATE-----"


def channel_credentials(tls: Tls) -> grpc.ChannelCredentials | None:
    """The credentials `tls` asks for, or None for plaintext. A certificate file is read now,
    so a wrong path or a file holding no certificate fails here, naming the file, instead of
    as UNAVAILABLE on every call."""
    if tls is False:
        return None
    if tls is True:
        return grpc.ssl_channel_credentials()
    path = Path(tls)
    roots = path.read_bytes()
    if _PEM_CERTIFICATE not in roots:
        raise ValueError(f"tls: {path} holds no PEM certificate")
    return grpc.ssl_channel_credentials(root_certificates=roots)
