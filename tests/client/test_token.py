"""Both Python clients send `token=` on every call, unary and streaming, directly and through
Envoy's gRPC route; without it a service with authentication on answers UNAUTHENTICATED."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import grpc
import pytest

from shellexec.client import AsyncShellExecClient, ShellExecClient

from support.acp import codex_end, codex_start
from support.stack import Stack, running_stack


@pytest.fixture(scope="module")
def secured(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    with running_stack(tmp_path_factory.mktemp("client-auth"), SHELLEXEC_AUTH="on") as stack:
        yield stack


def targets(stack: Stack) -> list[str]:
    return [stack.grpc_target, f"127.0.0.1:{stack.rest_port}"]


def test_the_blocking_client_sends_its_token(secured: Stack) -> None:
    token = secured.create_token("blocking", "admin")
    for target in targets(secured):
        with ShellExecClient(target, timeout=10, token=token) as client:
            session = client.create_session("client-task", agent="codex")
            client.publish(session.id, codex_start("c1", "ls"))
            client.publish(session.id, codex_end("c1", "a\n", 0))
            assert [m.id for m in client.messages(session.id)]
            events = iter(client.watch(session.id, since_revision=0, timeout=10))
            first = next(event for event in events if event.type != "heartbeat")
            assert first.message.session_id == session.id
        with ShellExecClient(target, timeout=10) as anonymous:
            with pytest.raises(grpc.RpcError) as refused:
                anonymous.get_session(session.id)
            assert refused.value.code() == grpc.StatusCode.UNAUTHENTICATED


def test_the_async_client_sends_its_token(secured: Stack) -> None:
    token = secured.create_token("async", "admin")

    async def calls(target: str) -> tuple[str, str, grpc.StatusCode]:
        async with AsyncShellExecClient(target, timeout=10, token=token) as client:
            session = await client.create_session("client-task", agent="codex")
            await client.publish(session.id, codex_start("c1", "ls"))
            first = ""
            async for event in client.watch(session.id, since_revision=0, timeout=10):
                if event.type != "heartbeat":
                    first = event.message.session_id
                    break
        async with AsyncShellExecClient(target, timeout=10) as anonymous:
            try:
                await anonymous.get_session(session.id)
            except grpc.aio.AioRpcError as error:
                return session.id, first, error.code()
        return session.id, first, grpc.StatusCode.OK

    for target in targets(secured):
        session_id, first, anonymous = asyncio.run(calls(target))
        assert first == session_id
        assert anonymous == grpc.StatusCode.UNAUTHENTICATED
