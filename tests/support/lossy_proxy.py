"""A gRPC proxy that loses answers: the call reaches the server and is applied there, but the
client gets UNAVAILABLE instead of the reply, as when a connection breaks between the server's
commit and its answer. Deterministic, unlike killing the server at the right moment.

Unary calls only (the bridge and the clients' write calls); bytes pass through unparsed.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from types import TracebackType
from typing import Any

import grpc

from shellexec.v1 import shell_exec_service_pb2

SERVICE = "/shellexec.v1.ShellExecService/"
Rewrite = Callable[[bytes], bytes]


class LossyProxy:
    """Forwards every unary call to `target`; throws away the first `lose[method]` answers of
    each named method (e.g. {"CreateSession": 1}), keeping them for `lost_answers`, and
    answers those calls `lost_as` instead. `rewrite[method]` changes that method's requests
    on the way (e.g. to play a server that ignores a field)."""

    def __init__(self, target: str, lose: Mapping[str, int],
                 rewrite: Mapping[str, Rewrite] | None = None,
                 lost_as: grpc.StatusCode = grpc.StatusCode.UNAVAILABLE) -> None:
        self._upstream = grpc.insecure_channel(target)
        self._to_lose = {SERVICE + method: count for method, count in lose.items()}
        self._rewrite = {SERVICE + method: change for method, change in (rewrite or {}).items()}
        self._lost_as = lost_as
        self._lock = threading.Lock()
        self._lost: dict[str, list[bytes]] = {}
        self._server = grpc.server(ThreadPoolExecutor(max_workers=4))
        self._server.add_generic_rpc_handlers((_unary_handlers(self._forward),))
        self.port = self._server.add_insecure_port("127.0.0.1:0")

    @property
    def target(self) -> str:
        return f"127.0.0.1:{self.port}"

    def __enter__(self) -> LossyProxy:
        self._server.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self._server.stop(grace=None)
        self._upstream.close()

    def lost_answers(self, method: str) -> list[bytes]:
        with self._lock:
            return list(self._lost.get(method, []))

    def _should_lose(self, method: str) -> bool:
        with self._lock:
            remaining = self._to_lose.get(method, 0)
            if remaining > 0:
                self._to_lose[method] = remaining - 1
            return remaining > 0

    def _forward(self, method: str, request: bytes, context: grpc.ServicerContext) -> bytes:
        call = self._upstream.unary_unary(method)
        if method in self._rewrite:
            request = self._rewrite[method](request)
        try:
            answer: bytes = call(request, timeout=10)
        except grpc.RpcError as failure:
            # As a real proxy does: the error's details (google.rpc) travel on in the trailers.
            context.set_trailing_metadata(failure.trailing_metadata())
            context.abort(failure.code(), failure.details() or "")
        if self._should_lose(method):
            with self._lock:
                self._lost.setdefault(method.removeprefix(SERVICE), []).append(answer)
            context.abort(self._lost_as, "answer lost by the test proxy")
        return answer


def _unary_handlers(forward: Callable[[str, bytes, grpc.ServicerContext], bytes]) -> Any:
    """A handler for every unary method of the service, passing bytes through unparsed."""
    service = shell_exec_service_pb2.DESCRIPTOR.services_by_name["ShellExecService"]
    return grpc.method_handlers_generic_handler(service.full_name, {
        method.name: grpc.unary_unary_rpc_method_handler(
            functools.partial(forward, SERVICE + method.name))
        for method in service.methods if not method.server_streaming})
