"""The public surface of shellexec.client, pinned: the blocking and the asyncio client offer
the same methods with the same parameters."""

from __future__ import annotations

import dataclasses
import inspect

import pytest
from google.protobuf import json_format

import shellexec.client as client_package
from shellexec.client import (
    AsyncShellExecClient,
    ErrorDetails,
    ShellExecClient,
    error_details,
    error_reason,
    to_protobuf_value,
)

METHODS = {
    "boot_state", "close", "complete_turn", "create_session", "delete_session", "delete_task",
    "get_session", "list_messages", "list_sessions",
    "messages", "normalize", "publish", "shell_output", "start_turn", "summarize", "watch",
}


def public_methods(cls: type) -> set[str]:
    return {name for name, _ in inspect.getmembers(cls, inspect.isfunction)
            if not name.startswith("_")}


def test_exported_names_are_the_clients_the_error_details_readers_and_the_converter(
        ) -> None:
    assert sorted(client_package.__all__) == [
        "AsyncShellExecClient", "ErrorDetails", "Feed", "ShellExecClient", "error_details",
        "error_reason", "to_protobuf_value"]


def test_the_error_details_readers_take_an_rpc_error() -> None:
    assert list(inspect.signature(error_reason).parameters) == ["error"]
    assert list(inspect.signature(error_details).parameters) == ["error"]
    assert [f.name for f in dataclasses.fields(ErrorDetails)] == [
        "reason", "domain", "field_violations", "resource_type", "resource_name"]


def test_both_clients_offer_exactly_the_documented_methods() -> None:
    assert public_methods(ShellExecClient) == METHODS
    assert public_methods(AsyncShellExecClient) == METHODS


def test_every_method_takes_the_same_parameters_in_both_clients() -> None:
    for name in sorted(METHODS):
        blocking = inspect.signature(getattr(ShellExecClient, name)).parameters
        awaited = inspect.signature(getattr(AsyncShellExecClient, name)).parameters
        assert list(blocking.values()) == list(awaited.values()), name


def test_every_async_method_is_awaited_or_iterated_asynchronously() -> None:
    for name in sorted(METHODS):
        method = getattr(AsyncShellExecClient, name)
        assert inspect.iscoroutinefunction(method) or inspect.isasyncgenfunction(method), name


def test_the_converter_takes_one_json_value_and_gives_its_protobuf_value() -> None:
    assert list(inspect.signature(to_protobuf_value).parameters) == ["value"]
    update = {"sessionUpdate": "agent_message_chunk", "n": [1, 2.5, None, True],
              "content": {"type": "text", "text": "hé"}}
    assert json_format.MessageToDict(to_protobuf_value(update)) == update


def _nested(levels: int) -> object:
    value: object = []
    for _ in range(levels):
        value = [value]
    return value


@pytest.mark.parametrize("value", [10 ** 400, "\ud800", {1, 2}, _nested(200)],
                         ids=["beyond-a-double", "lone-surrogate", "not-json", "too-deep"])
def test_the_converter_refuses_what_has_no_value_form_with_a_value_error(value: object
                                                                         ) -> None:
    with pytest.raises(ValueError, match=r"^cannot encode as a google\.protobuf\.Value: "):
        to_protobuf_value(value)
