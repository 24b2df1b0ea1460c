"""What the Python clients (blocking and asyncio) take and refuse when they are made, as the Go,
Java and TypeScript clients do (tests/clients/go/clienttest/options_test.go,
clients/java/src/test/java/com/shellexec/client/OptionsProbe.java,
clients/typescript/test/client-options.ts):

- a token no header can carry is a ValueError saying what is wrong with it, in the bridge's
  words, never what it is: with a line feed read from a file, the blocking client failed every
  call with INTERNAL "Invalid metadata" and the asyncio one with an error that was no
  grpc.RpcError;
- a timeout of 0 (or None) is no deadline, as in the other clients (it failed every call at
  once with DEADLINE_EXCEEDED), and a negative or non-finite one is a ValueError;
- the channel bounds gRPC's reconnect backoff (which grows to 120 s) at 5 s.
"""

from __future__ import annotations

import asyncio
import math
import re
from typing import Any

import grpc
import pytest

from shellexec.bridge.service_options import token_problem as bridge_token_problem
from shellexec.client import AsyncShellExecClient, ShellExecClient, _auth, _values
from shellexec.rules.limits import MAX_BEARER_TOKEN_CHARS

from support.stack import Stack

TARGET = "127.0.0.1:9"  # never called
SECRET = "shx_Secret0123456789"
REFUSED_TOKENS = [
    (f"{SECRET}\n", "token ends with a line feed"),
    (f"{SECRET}\r\n", f"token holds a carriage return (character {len(SECRET) + 1} of "
                      f"{len(SECRET) + 2})"),
    (f"Bearer {SECRET}", f"token holds a space (character 7 of {len(SECRET) + 7})"),
    (f"{SECRET}\t", "token ends with a tab"),
    (f"{SECRET}\0x", f"token holds a NUL byte (character {len(SECRET) + 1} of "
                     f"{len(SECRET) + 2})"),
    (f"{SECRET}\x7f", "token ends with a control character"),
    (f"{SECRET}é{SECRET}", f"token holds a character outside ASCII (character "
                           f"{len(SECRET) + 1} of {2 * len(SECRET) + 1})"),
    (f"{SECRET}\U0001f600", "token ends with a character outside ASCII"),
    (SECRET + "x" * (257 - len(SECRET)),
     "token is 257 characters long; the service takes at most 256"),
]
RECONNECT_OPTION = ("grpc.max_reconnect_backoff_ms", 5_000)


def _made_async(**options: Any) -> None:
    async def make() -> None:
        await AsyncShellExecClient(TARGET, **options).close()
    asyncio.run(make())


def _made(**options: Any) -> None:
    ShellExecClient(TARGET, **options).close()
    _made_async(**options)


@pytest.mark.parametrize(("token", "problem"), REFUSED_TOKENS,
                         ids=[problem.split(" (")[0] for _, problem in REFUSED_TOKENS])
@pytest.mark.parametrize("client", [ShellExecClient, AsyncShellExecClient])
def test_a_token_no_header_can_carry_is_refused_saying_why(client: type, token: str,
                                                           problem: str) -> None:
    with pytest.raises(ValueError, match=r"^token ") as refused:
        client(TARGET, token=token)
    message = str(refused.value)
    assert message == f"{problem}: a token is at most 256 visible ASCII characters"
    assert SECRET not in message
    assert refused.value.__cause__ is None  # no chained error shows it either
    assert refused.value.__context__ is None


def test_the_longest_token_and_none_are_taken() -> None:
    _made(token="x" * 256)
    _made(token="")
    _made(token="!~")


def test_the_token_rule_is_the_bridge_s_and_the_service_s() -> None:
    # The client installs without the server, so it holds its own copy of the bound.
    assert _auth.MAX_BEARER_TOKEN_CHARS == MAX_BEARER_TOKEN_CHARS
    assert bridge_token_problem is _auth.token_problem


@pytest.mark.parametrize(("timeout", "message"), [
    (-1, "timeout: must not be negative, got -1"),
    (-0.5, "timeout: must not be negative, got -0.5"),
    (math.nan, "timeout: must be a finite number of seconds, got nan"),
    (math.inf, "timeout: must be a finite number of seconds, got inf"),
    (-math.inf, "timeout: must be a finite number of seconds, got -inf"),
])
@pytest.mark.parametrize("client", [ShellExecClient, AsyncShellExecClient])
def test_a_negative_or_non_finite_timeout_is_refused(client: type, timeout: float,
                                                     message: str) -> None:
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        client(TARGET, timeout=timeout)


@pytest.mark.parametrize("timeout", [0, 0.0, None])
def test_a_timeout_of_zero_or_none_is_no_deadline(stack: Stack, timeout: float | None) -> None:
    with ShellExecClient(stack.grpc_target, timeout=timeout) as client:
        session = client.create_session("python-no-deadline")
        assert client.get_session(session.id).id == session.id

    async def calls() -> str:
        async with AsyncShellExecClient(stack.grpc_target, timeout=timeout) as client:
            created = await client.create_session("python-no-deadline-async")
            return (await client.get_session(created.id)).id

    assert asyncio.run(calls()).startswith("ses_")


def test_the_channels_bound_the_reconnect_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    """gRPC's backoff grows to 120 s: after an outage a client kept failing UNAVAILABLE for up
    to ~17 s once the service was back (longer after a longer outage)."""
    assert RECONNECT_OPTION in _values.CHANNEL_OPTIONS
    made: list[tuple[str, Any]] = []

    def recording(name: str, make: Any) -> Any:
        def channel(*args: Any, **kwargs: Any) -> Any:
            made.append((name, kwargs["options"]))
            return make(*args, **kwargs)
        return channel

    for module in (grpc, grpc.aio):
        for name in ("insecure_channel", "secure_channel"):
            monkeypatch.setattr(module, name, recording(f"{module.__name__}.{name}",
                                                        getattr(module, name)))
    _made()
    _made(tls=True)
    assert sorted(name for name, _ in made) == [
        "grpc.aio.insecure_channel", "grpc.aio.secure_channel", "grpc.insecure_channel",
        "grpc.secure_channel"]
    for name, options in made:
        assert RECONNECT_OPTION in options, name
