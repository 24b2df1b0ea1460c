"""Server reflection that can also describe a single method.

grpcio-reflection answers `file_containing_symbol` with the descriptor pool's
FindFileContainingSymbol, which knows services, messages, fields and enums but not methods:
`grpcurl describe shellexec.v1.ShellExecService.CreateSession` failed with "Symbol not found"
(upstream grpc/grpc#34743). The servicer takes the pool as a parameter, so it gets one that
falls back to the method's service file. See ADR 0041.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import grpc
from google.protobuf import descriptor, descriptor_pool
from grpc_reflection.v1alpha import reflection


class MethodAwarePool:
    """A descriptor pool whose symbol lookup also resolves `package.Service.Method`."""

    def __init__(self, pool: descriptor_pool.DescriptorPool) -> None:
        self._pool = pool

    # Named like the pool's own method, which the reflection servicer calls.
    def FindFileContainingSymbol(self, full_name: str) -> descriptor.FileDescriptor:  # noqa: N802
        try:
            found: descriptor.FileDescriptor = self._pool.FindFileContainingSymbol(full_name)
        except KeyError:
            # A method lives in its service's file; KeyError again means "not found".
            method = self._pool.FindMethodByName(full_name)
            found = method.containing_service.file
        return found

    def __getattr__(self, name: str) -> Any:
        # Every other lookup the reflection servicer makes is the pool's own.
        return getattr(self._pool, name)


def enable_reflection(service_names: Iterable[str], server: grpc.aio.Server) -> None:
    """Registers grpc.reflection.v1alpha (what grpcurl 1.8 asks; newer grpcurl falls back to
    it) answering from the default pool, methods included."""
    reflection.enable_server_reflection(tuple(service_names), server,
                                        pool=MethodAwarePool(descriptor_pool.Default()))
