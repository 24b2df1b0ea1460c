"""A text argument UTF-8 cannot carry is refused before anything is sent, naming the argument:
protobuf's own UnicodeEncodeError said only "'utf-8' codec can't encode character", so a
caller passing several ids could not tell which one held the lone surrogate."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable
from typing import Any

import pytest

from shellexec.client import AsyncShellExecClient, ShellExecClient

# Nothing listens here: every case must fail while building its request, before any call.
NOWHERE = "127.0.0.1:9"
LONE = "x\ud800"
# The arguments that are not text, given a value each method accepts.
OTHER_ARGUMENTS = {"update": {}, "updates": [{}], "sequence": 1, "since_revision": 1,
                   "limit": 1, "timeout": 1.0}


def text_arguments(cls: type) -> list[tuple[str, str]]:
    """(method, parameter) for every text parameter of the client's public methods."""
    found = []
    for name, method in inspect.getmembers(cls, inspect.isfunction):
        if name.startswith("_"):
            continue
        for parameter in inspect.signature(method).parameters.values():
            if parameter.annotation == "str":
                found.append((name, parameter.name))
    return found


def arguments(method: Callable[..., Any], lone: str) -> dict[str, Any]:
    """Every parameter of `method` set to an acceptable value, and `lone` to a lone surrogate."""
    given: dict[str, Any] = {}
    for parameter in list(inspect.signature(method).parameters.values())[1:]:
        if parameter.name == lone:
            given[parameter.name] = LONE
        elif parameter.annotation == "str":
            given[parameter.name] = "ses_0123456789abcdef0123456789abcdef"
        elif parameter.name in OTHER_ARGUMENTS:
            given[parameter.name] = OTHER_ARGUMENTS[parameter.name]
    return given


def refusal(parameter: str) -> str:
    return (rf"^cannot send \w+Request: {parameter} holds a lone surrogate \(U\+D800 at index "
            r"1\), which UTF-8 cannot carry")


def test_every_public_method_s_text_arguments_are_covered() -> None:
    methods = {name for name, _ in text_arguments(ShellExecClient)}
    assert methods >= {"create_session", "publish", "watch", "messages", "complete_turn",
                       "list_sessions", "shell_output", "delete_task"}
    assert text_arguments(ShellExecClient) == text_arguments(AsyncShellExecClient)


@pytest.mark.parametrize(("method", "parameter"), text_arguments(ShellExecClient))
def test_the_blocking_client_names_the_text_argument_it_cannot_send(method: str,
                                                                    parameter: str) -> None:
    with ShellExecClient(NOWHERE, timeout=1) as client:
        call = getattr(client, method)
        with pytest.raises(ValueError, match=refusal(parameter)):
            call(**arguments(getattr(ShellExecClient, method), parameter))


@pytest.mark.parametrize(("method", "parameter"), text_arguments(AsyncShellExecClient))
def test_the_asyncio_client_names_the_text_argument_it_cannot_send(method: str,
                                                                   parameter: str) -> None:
    async def attempt() -> None:
        async with AsyncShellExecClient(NOWHERE, timeout=1) as client:
            called = getattr(client, method)(
                **arguments(getattr(AsyncShellExecClient, method), parameter))
            # `watch` is an async generator: its request is built at the first event.
            answer = called.__anext__() if inspect.isasyncgen(called) else called
            with pytest.raises(ValueError, match=refusal(parameter)):
                await answer

    asyncio.run(attempt())
