"""PostgreSQL against SQLite, in one run (ADR 0070):

- server CPU per publish: the same small deltas, 32 in flight over gRPC, to a server on each
  engine, in alternating rounds; the server process's CPU time per publish (target: on
  PostgreSQL at most 1.5 times SQLite's). PostgreSQL's own CPU per publish is reported too;
- list flatness and append flatness as `list_flatness.py` and `append_flatness.py` measure
  them, on PostgreSQL (targets 1.2 and 1.3).

The machine's two cores are shared by the client, the server and PostgreSQL: this measures
cost, not speed."""

from __future__ import annotations

import asyncio
import itertools
import statistics
import tempfile
from pathlib import Path

import append_flatness
import grpc
import list_flatness
from _postgres import local_postgres, postgres_cpu_seconds

from shellexec.client._values import publish_request

from _service import conclude, cpu_seconds
from support.stack import Stack, running_stack

IN_FLIGHT = 32
PUBLISHES = 2_000
ROUNDS = 5
CALLS = 64
PUBLISH = "/shellexec.v1.ShellExecService/PublishUpdate"
CPU_TARGET = 1.5


async def _burst(target: str, session_id: str, count: int, offset: int) -> None:
    async with grpc.aio.insecure_channel(target) as channel:
        publish = channel.unary_unary(PUBLISH)
        requests = iter([publish_request(session_id, {
            "sessionUpdate": "tool_call_update", "toolCallId": f"call-{index % CALLS}",
            "_meta": {"terminal_output_delta": {"data": f"line {index}\n"}}},
            None).SerializeToString() for index in range(offset, offset + count)])

        async def worker() -> None:
            for request in requests:
                await publish(request)

        await asyncio.gather(*(worker() for _ in range(IN_FLIGHT)))


def _prepare(stack: Stack) -> str:
    with stack.client() as client:
        session_id = client.create_session("bench-cost").id
        for index in range(CALLS):
            client.publish(session_id, {"sessionUpdate": "tool_call",
                                        "toolCallId": f"call-{index}", "kind": "execute",
                                        "title": "build", "rawInput": {"command": "make"}})
    return session_id


def main() -> None:
    with (local_postgres() as postgres, tempfile.TemporaryDirectory() as sqlite_folder,
          tempfile.TemporaryDirectory() as pg_folder,
          running_stack(Path(sqlite_folder)) as sqlite_stack,
          running_stack(Path(pg_folder), SHELLEXEC_DATABASE_URL=postgres.url()) as pg_stack):
        stacks = {"sqlite": sqlite_stack, "pg": pg_stack}
        sessions = {name: _prepare(stack) for name, stack in stacks.items()}
        offsets = itertools.count(0, PUBLISHES)
        per_publish: dict[str, list[float]] = {"sqlite": [], "pg": [], "postgres": []}
        for _ in range(ROUNDS + 1):  # the first round warms both up and is not counted
            for name, stack in stacks.items():
                assert stack.server is not None
                before, db_before = cpu_seconds(stack.server.pid), postgres_cpu_seconds(postgres)
                asyncio.run(_burst(stack.grpc_target, sessions[name], PUBLISHES, next(offsets)))
                per_publish[name].append((cpu_seconds(stack.server.pid) - before) / PUBLISHES)
                if name == "pg":
                    per_publish["postgres"].append(
                        (postgres_cpu_seconds(postgres) - db_before) / PUBLISHES)
        sqlite_us, pg_us, postgres_us = (statistics.median(values[1:]) * 1e6
                                         for values in per_publish.values())
        with pg_stack.client() as client:
            list_empty, list_full = list_flatness.measure(client)
            append_small, append_large = append_flatness.measure(client)

    ratio = pg_us / sqlite_us
    conclude("postgres cost (server CPU per publish, PostgreSQL vs SQLite, 32 in flight)",
             f"server CPU per publish: SQLite {sqlite_us:.0f} us, PostgreSQL {pg_us:.0f} us "
             f"(+ {postgres_us:.0f} us in PostgreSQL)",
             {"sqlite_cpu_us": sqlite_us, "pg_server_cpu_us": pg_us,
              "postgres_cpu_us": postgres_us}, ratio, f"<= {CPU_TARGET}", ratio <= CPU_TARGET)
    list_ratio = list_full / list_empty
    conclude("list flatness on PostgreSQL (200 messages, 256 KiB outputs vs empty)",
             f"list: empty {list_empty * 1e3:.2f} ms, 256 KiB {list_full * 1e3:.2f} ms",
             {"empty_ms": list_empty * 1e3, "full_ms": list_full * 1e3}, list_ratio,
             f"<= {list_flatness.TARGET}", list_ratio <= list_flatness.TARGET)
    append_ratio = append_large / append_small
    conclude("append flatness on PostgreSQL (1 KiB delta at 250 KiB vs 1 KiB held)",
             f"append: 1 KiB held {append_small * 1e3:.2f} ms, 250 KiB held "
             f"{append_large * 1e3:.2f} ms",
             {"held_1k_ms": append_small * 1e3, "held_250k_ms": append_large * 1e3},
             append_ratio, f"<= {append_flatness.TARGET}", append_ratio <= append_flatness.TARGET)


if __name__ == "__main__":
    main()
