"""A retry under the same `sequence` is a duplicate when its update is the same JSON value,
-0.0 for 0.0 included: REST cannot tell them apart, and over gRPC (a Value holds the double as
sent) the retry must not be refused as SEQUENCE_CONFLICT either."""

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
