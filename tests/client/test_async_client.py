"""The asyncio client against the real server: each of its reads answers what the blocking
client answers for the same session."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import grpc
import pytest

from shellexec.client import AsyncShellExecClient, ShellExecClient, to_protobuf_value
from shellexec.v1 import shell_output_pb2

from support.acp import codex_delta, codex_end, codex_start
from support.stack import Stack

T = TypeVar("T")


def run(stack: Stack, call: Callable[[AsyncShellExecClient], Awaitable[T]]) -> T:
    async def connected() -> T:
        async with AsyncShellExecClient(stack.grpc_target, timeout=10) as aio:
            return await call(aio)

    return asyncio.run(connected())


def session_with_commands(client: ShellExecClient, count: int) -> tuple[str, str]:
    """A new session (and its task) with `count` finished commands."""
    task = f"aio-{uuid.uuid4().hex[:12]}"
    session = client.create_session(task, agent="codex")
    for index in range(count):
        call = f"c{index}"
        client.publish(session.id, codex_start(call, f"echo {index}"))
        client.publish(session.id, codex_delta(call, f"{index}\n"))
        client.publish(session.id, codex_end(call, f"{index}\n", 0))
    return session.id, task


def test_normalize_and_summarize_answer_as_the_blocking_client(
        stack: Stack, client: ShellExecClient) -> None:
    updates: list[Any] = [codex_start("n", "make"), codex_delta("n", "built\n"),
                          codex_end("n", "built\n", 2)]
    output = shell_output_pb2.ShellOutput(exit_code=1, stdout="héllo\n", stderr="no\n")

    async def both(aio: AsyncShellExecClient) -> tuple[Any, Any]:
        return await aio.normalize(updates, agent="codex"), await aio.summarize(output)

    normalized, summary = run(stack, both)
    assert normalized.output.exit_code == 2
    assert normalized == client.normalize(updates, agent="codex")
    assert summary.stdout_bytes == 7
    assert summary == client.summarize(output)


def test_reads_page_and_fetch_as_the_blocking_client(
        stack: Stack, client: ShellExecClient) -> None:
    session_id, task = session_with_commands(client, 3)
    newest = client.list_messages(session_id, limit=1, sort="desc")

    async def reads(aio: AsyncShellExecClient) -> list[Any]:
        return [
            await aio.list_messages(session_id, limit=1, sort="desc"),
            await aio.list_messages(session_id, limit=5, before=newest.cursor, sort="desc"),
            await aio.list_messages(session_id, limit=1, after=newest.cursor),
            await aio.shell_output(session_id, newest.messages[0].id),
            await aio.boot_state(task),
            await aio.messages(session_id),
        ]

    pages = run(stack, reads)
    assert pages == [
        newest,
        client.list_messages(session_id, limit=5, before=newest.cursor, sort="desc"),
        client.list_messages(session_id, limit=1, after=newest.cursor),
        client.shell_output(session_id, newest.messages[0].id),
        client.boot_state(task),
        client.messages(session_id),
    ]
    assert len(pages[1].messages) == 2  # the two older ones, newest first
    assert pages[3].output.stdout == "2\n"
    assert [m.id for m in pages[5]] == [m.id for m in reversed(
        client.list_messages(session_id, limit=5, sort="desc").messages)]


def test_watch_replays_the_feed_as_the_blocking_client(
        stack: Stack, client: ShellExecClient) -> None:
    session_id, _ = session_with_commands(client, 1)
    revision = client.get_session(session_id).revision

    async def replay(aio: AsyncShellExecClient) -> list[Any]:
        events = []
        stream = aio.watch(session_id, since_revision=0, timeout=10)
        async for event in stream:
            events.append(event)
            if event.type != "heartbeat" and event.revision == revision:
                break
        await stream.aclose()  # cancels the call
        return events

    events = run(stack, replay)
    assert (events[0].type, events[0].revision) == ("heartbeat", 0)
    changes = [e for e in events if e.type != "heartbeat"]
    assert [e.revision for e in changes] == list(range(1, revision + 1))
    blocking = []
    stream = client.watch(session_id, since_revision=0, timeout=10)
    for event in stream:
        if event.type != "heartbeat":
            blocking.append(event)
        if len(blocking) == len(changes):
            break
    stream.close()
    assert changes == blocking


def test_list_sessions_pages_as_the_blocking_client(stack: Stack, client: ShellExecClient
                                                    ) -> None:
    first, _ = session_with_commands(client, 1)
    second, _ = session_with_commands(client, 2)
    newest = client.list_sessions(limit=2, sort="desc")
    assert [session.id for session in newest.sessions] == [second, first]
    assert newest.has_more  # the shared stack holds other tests' sessions too
    by_counts = {session.id: session.command_count for session in newest.sessions}
    assert by_counts == {first: 1, second: 2}
    assert run(stack, lambda aio: aio.list_sessions(limit=2, sort="desc")) == newest
    older = client.list_sessions(limit=1, sort="desc", before=first)
    assert first not in [session.id for session in older.sessions]


def test_both_clients_publish_a_converted_value_as_the_plain_update(
        stack: Stack, client: ShellExecClient) -> None:
    """A Value made by `to_protobuf_value` is sent as it is, and the service stores what it
    stores for the plain update; the same sequence again is a duplicate."""
    updates = [codex_start("v", "make"), codex_delta("v", "built\n"), codex_end("v", "built\n", 0)]
    plain, _ = session_with_commands(client, 0)
    for sequence, update in enumerate(updates, 1):
        client.publish(plain, update, sequence)
    blocking, _ = session_with_commands(client, 0)
    awaited, _ = session_with_commands(client, 0)
    values = [to_protobuf_value(update) for update in updates]
    for sequence, value in enumerate(values, 1):
        assert not client.publish(blocking, value, sequence).duplicate
    assert client.publish(blocking, values[0], 1).duplicate

    async def publish_all(aio: AsyncShellExecClient) -> list[bool]:
        return [(await aio.publish(awaited, value, sequence)).duplicate
                for sequence, value in enumerate(values, 1)]

    assert run(stack, publish_all) == [False, False, False]

    def stored(session_id: str) -> list[tuple[str, str, str]]:
        return [(m.type, m.content, client.shell_output(session_id, m.id).output.stdout)
                for m in client.messages(session_id)]

    assert stored(blocking) == stored(awaited) == stored(plain) == [
        ("tool_execute", "make", "built\n")]


def _objects(levels: int) -> dict[str, Any]:
    """A plan update whose objects nest `levels` deep (itself level 1)."""
    value: dict[str, Any] = {"sessionUpdate": "plan"}
    inner = value
    for _ in range(levels - 1):
        inner["n"] = {}
        inner = inner["n"]
    return value


def test_both_clients_refuse_an_update_nested_past_the_limit_before_sending_it(
        stack: Stack, client: ShellExecClient) -> None:
    """35 to 50 levels of objects failed inside the client with protobuf's DecodeError, when
    the request was built; now every depth past 32 is a ValueError naming the limit, and 32
    is sent."""
    session, _ = session_with_commands(client, 0)
    assert client.publish(session, _objects(32)).message.id == ""  # a plan stores nothing
    for levels in (33, 40, 50, 60):
        with pytest.raises(ValueError, match="more than 32 levels deep"):
            client.publish(session, _objects(levels))
        with pytest.raises(ValueError, match="more than 32 levels deep"):
            client.normalize([_objects(levels)])

    async def refused(aio: AsyncShellExecClient) -> None:
        with pytest.raises(ValueError, match="more than 32 levels deep"):
            await aio.publish(session, _objects(40))
        with pytest.raises(ValueError, match="more than 32 levels deep"):
            await aio.normalize([_objects(40)])

    run(stack, refused)


def test_a_closed_feed_frees_its_place_in_both_clients(stack: Stack,
                                                       client: ShellExecClient) -> None:
    """The blocking client returned grpc's call object, which has no `close()`: the way its
    docstring said to end a feed raised AttributeError."""
    session, _ = session_with_commands(client, 1)
    feed = client.watch(session, since_revision=0, timeout=10)
    assert next(feed).type == "heartbeat"
    feed.close()
    feed.close()  # again: nothing
    with pytest.raises(grpc.RpcError) as ended:
        next(feed)
    assert ended.value.code() == grpc.StatusCode.CANCELLED
    assert feed.code() == grpc.StatusCode.CANCELLED  # grpc's call, as before
    assert not feed.is_active()
    with client.watch(session, since_revision=0, timeout=10) as scoped:
        assert next(scoped).type == "heartbeat"
    with pytest.raises(grpc.RpcError):
        next(scoped)

    async def closed(aio: AsyncShellExecClient) -> None:
        feed = aio.watch(session, since_revision=0, timeout=10)
        assert (await anext(feed)).type == "heartbeat"
        await feed.aclose()
        with pytest.raises(StopAsyncIteration):
            await anext(feed)

    run(stack, closed)


def test_closing_the_client_ends_a_feed_being_read_with_an_rpc_error(
        stack: Stack, client: ShellExecClient) -> None:
    """Closing the client while a task read its feed ended that task as cancelled (a
    CancelledError nobody asked for, which its awaiter then took as its own); it now raises
    grpc.RpcError CANCELLED, as the blocking client's reader does, and so does a unary call in
    flight. Cancelling the reading task itself still cancels it."""
    session, _ = session_with_commands(client, 1)

    async def read(aio: AsyncShellExecClient, started: asyncio.Event) -> int:
        events = 0
        async for _ in aio.watch(session, since_revision=0):
            events += 1
            started.set()
        return events

    async def closed_under_the_reader() -> None:
        aio = AsyncShellExecClient(stack.grpc_target, timeout=10)
        started = asyncio.Event()
        reader = asyncio.create_task(read(aio, started))
        await asyncio.wait_for(started.wait(), 10)
        await aio.close()
        with pytest.raises(grpc.RpcError) as ended:
            await reader
        assert ended.value.code() == grpc.StatusCode.CANCELLED
        assert not reader.cancelled()
        current = asyncio.current_task()
        assert current is not None
        assert current.cancelling() == 0

    async def cancelled_reader() -> None:
        async with AsyncShellExecClient(stack.grpc_target, timeout=10) as aio:
            started = asyncio.Event()
            reader = asyncio.create_task(read(aio, started))
            await asyncio.wait_for(started.wait(), 10)
            reader.cancel()
            with pytest.raises(asyncio.CancelledError):
                await reader
            assert reader.cancelled()
            # The client is still usable: only that feed ended.
            assert (await aio.get_session(session)).id == session

    async def closed_under_a_unary_call() -> None:
        aio = AsyncShellExecClient(stack.grpc_target, timeout=10)
        caller = asyncio.create_task(aio.list_sessions(limit=50))
        await asyncio.sleep(0)  # the call is sent
        await aio.close()
        with pytest.raises(grpc.RpcError) as ended:
            await caller
        assert ended.value.code() == grpc.StatusCode.CANCELLED

    asyncio.run(closed_under_the_reader())
    asyncio.run(cancelled_reader())
    asyncio.run(closed_under_a_unary_call())
