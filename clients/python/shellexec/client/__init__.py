"""A small typed client for shellexec.v1.ShellExecService.

    with ShellExecClient("127.0.0.1:50051", token=TOKEN) as client:
        session = client.create_session("task-1", agent="codex")
        turn = client.start_turn(session.id)
        client.publish(session.id, {"sessionUpdate": "tool_call", ...}, sequence=1)
        client.complete_turn(session.id, turn.id, "end_turn")

`token` is a bearer token (`shellexec token create`), needed when the service has
authentication on; it is sent with every call. A token no header can carry (a line feed read
with it from a file, a character outside ASCII, more than 256 characters) is refused at once
with ValueError, which says what is wrong and never what the token is. `timeout` is each
unary call's deadline in seconds (30 by default; None or 0 for none). `tls` speaks TLS to a
front door with a certificate: `tls="cert.pem"` trusts that PEM file's certificates alone,
`tls=True` the system's. After an outage a client tries to reconnect at least every 5 seconds
(gRPC's own backoff grows to two minutes).

`watch` returns a `Feed`: iterate it, and `close()` it when done. `AsyncShellExecClient` has
the same methods with the same parameters, awaited (and `watch` iterated with `async for`,
and closed with `aclose()`).

Updates are plain JSON values (the `params.update` object of an ACP `session/update`), or the
google.protobuf.Value `to_protobuf_value` made of one, which `publish` sends as it is (convert
once when you check or keep an update before publishing it). The generated messages are
returned as they are (`shellexec.v1.*_pb2`). A failed call raises `grpc.RpcError`;
`error_reason` and `error_details` read what its google.rpc details say.
"""

from __future__ import annotations

from shellexec.client._values import to_protobuf_value
from shellexec.client.aio import AsyncShellExecClient
from shellexec.client.errors import ErrorDetails, error_details, error_reason
from shellexec.client.sync import Feed, ShellExecClient

__all__ = ["AsyncShellExecClient", "ErrorDetails", "Feed", "ShellExecClient", "error_details",
           "error_reason", "to_protobuf_value"]
