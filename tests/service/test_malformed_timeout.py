"""A gRPC or gRPC-Web call whose `grpc-timeout` is not gRPC's form (1 to 8 digits and a unit,
`H M S m u n`) is refused by the front door from its headers: passed on, one such call
(`grpc-timeout: zzz`) broke the front door's connection to the server for other callers, 35 to
50 % of whose calls with a deadline then failed INTERNAL ("Error parsing 'grpc-timeout'
metadata") until a restart (a probe)."""

from __future__ import annotations

import http.client
import struct
from collections import Counter

import grpc
import pytest

from shellexec.app.grpc_codecs import MALFORMED_TIMEOUT
from shellexec.v1 import shell_exec_service_pb2 as pb
from shellexec.v1 import shell_exec_service_pb2_grpc as pb_grpc

from support.rest import unique
from support.stack import Stack

CREATE = "/shellexec.v1.ShellExecService/CreateSession"


def _grpc_web(stack: Stack, timeout: str) -> tuple[http.client.HTTPResponse, bytes]:
    message = pb.CreateSessionRequest(task_id=unique("timeout")).SerializeToString()
    connection = http.client.HTTPConnection("127.0.0.1", stack.rest_port, timeout=10)
    connection.request("POST", CREATE, body=struct.pack(">BI", 0, len(message)) + message,
                       headers={"content-type": "application/grpc-web+proto",
                                "grpc-timeout": timeout})
    answer = connection.getresponse()
    body = answer.read()
    connection.close()
    return answer, body


def _with_deadline(stack: Stack) -> str:
    with grpc.insecure_channel(f"127.0.0.1:{stack.rest_port}") as channel:
        try:
            pb_grpc.ShellExecServiceStub(channel).CreateSession(
                pb.CreateSessionRequest(task_id=unique("victim")), timeout=10)
        except grpc.RpcError as error:
            return f"{error.code().name} {error.details()}"
    return "OK"


@pytest.mark.parametrize("timeout", ["zzz", "10", "123456789S", "1.5S", "-1S", "1s", "5S,7S",
                                     "1 S"])
def test_a_malformed_timeout_is_refused_and_harms_no_other_call(stack: Stack,
                                                                timeout: str) -> None:
    refused, _ = _grpc_web(stack, timeout)

    assert refused.status == 200
    assert refused.getheader("grpc-status") == "3"  # INVALID_ARGUMENT
    assert refused.getheader("grpc-message") == MALFORMED_TIMEOUT
    assert Counter(_with_deadline(stack) for _ in range(20)) == {"OK": 20}


@pytest.mark.parametrize("timeout", ["99999999H", "30S", "250000m", "7000000u", "2M",
                                     "99999999n"])
def test_a_timeout_of_grpc_s_form_is_served(stack: Stack, timeout: str) -> None:
    answer, body = _grpc_web(stack, timeout)
    assert answer.getheader("grpc-message") != MALFORMED_TIMEOUT
    # Served: the answer's message, then its trailers (a tenth of a second may not be enough).
    assert b"grpc-status:0" in body or answer.getheader("grpc-status") == "4"


@pytest.mark.parametrize(("path", "content_type"), [
    (CREATE, "application/proto"),  # Connect, unary
    ("/shellexec.v1.ShellExecService/WatchMessages", "application/connect+proto"),
    ("/shellexec.v1.ShellExecService/", "application/grpc-web+proto"),  # the routes' prefix
    (f"{CREATE}/x", "application/grpc-web+proto"),
    ("/grpc.health.v1.Health/Check", "application/proto"),  # needs no token
    ("/api/v1/task-sessions", "application/json"),  # REST
])
def test_no_path_or_protocol_passes_a_malformed_timeout_on(stack: Stack, path: str,
                                                          content_type: str) -> None:
    """The route looked at gRPC content types on the gRPC paths only: a Connect call, a
    health check, REST and a path the gRPC routes take by prefix carried `zzz` to the server,
    and other callers' calls failed after (a review)."""
    connection = http.client.HTTPConnection("127.0.0.1", stack.rest_port, timeout=10)
    connection.request("POST", path, body=b"{}" if "json" in content_type else b"",
                       headers={"content-type": content_type, "connect-protocol-version": "1",
                                "grpc-timeout": "zzz"})
    refused = connection.getresponse()
    refused.read()
    connection.close()

    assert refused.getheader("grpc-status") == "3"
    assert refused.getheader("grpc-message") == MALFORMED_TIMEOUT
    assert Counter(_with_deadline(stack) for _ in range(20)) == {"OK": 20}

