"""The gRPC surface: thin servicers that validate, call a use case and build the response.

This is the only package that knows gRPC status codes.
"""

from __future__ import annotations

from shellexec.api.servicers import SERVICE_NAME, ShellExecServicer

__all__ = ["SERVICE_NAME", "ShellExecServicer"]
