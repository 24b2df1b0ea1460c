"""Review probe (fails until fixed): a retry under the same `sequence` is a duplicate when its
update is the same JSON value. `payload_digest` hashes `json.dumps` of the update, which
writes the double -0.0 as `-0.0` and 0.0 as `0.0`: over gRPC (where a Value's number is a
double as sent) a retry whose number went through a sign flip of zero is refused as
SEQUENCE_CONFLICT, while through Envoy's REST door `-0` and `0` arrive alike and match."""

from __future__ import annotations

from typing import Any

import grpc
import pytest

from shellexec.client import ShellExecClient

from support.stack import Stack


def tool_call(number: float) -> dict[str, Any]:
    return {"sessionUpdate": "tool_call", "toolCallId": "z", "title": "ls", "kind": "execute",
            "rawInput": {"command": ["ls"], "timeout": number}}


def test_a_retry_with_negative_zero_for_zero_is_a_duplicate(stack: Stack,
                                                            client: ShellExecClient) -> None:
    session_id = stack.api.new_session()["id"]
    assert client.publish(session_id, tool_call(0.0), 1).duplicate is False

    try:
        retried = client.publish(session_id, tool_call(-0.0), 1)
    except grpc.RpcError as error:
        pytest.fail(f"the retry was refused: {error.code()} {error.details()}")
    assert retried.duplicate is True
