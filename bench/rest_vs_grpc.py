"""REST through Envoy vs direct gRPC for a list call (target: REST throughput at least 0.8 of
gRPC's). Both with the same concurrency from the same kind of client process."""

from __future__ import annotations

import http.client
import time
from concurrent.futures import ThreadPoolExecutor

from shellexec.client import ShellExecClient

from _service import conclude, interleaved_medians, running_stack

MESSAGES = 20
WORKERS = 8
SECONDS = 2.0
ROUNDS = 5
TARGET = 0.8


def _rate(worker_factory: object, seconds: float) -> float:
    """Calls per second of WORKERS threads, each calling its own worker in a loop."""
    deadline = time.perf_counter() + seconds

    def loop() -> int:
        call = worker_factory()  # type: ignore[operator]
        done = 0
        while time.perf_counter() < deadline:
            call()
            done += 1
        return done

    with ThreadPoolExecutor(WORKERS) as pool:
        total = sum(pool.map(lambda _: loop(), range(WORKERS)))
    return total / seconds


def main() -> None:
    with running_stack() as stack, stack.client() as client:
        session_id = client.create_session("bench-rest").id
        for index in range(MESSAGES):
            client.publish(session_id, {
                "sessionUpdate": "tool_call", "toolCallId": f"c{index}", "kind": "execute",
                "title": "ls", "rawInput": {"command": f"ls {index}"}})
        path = f"/api/v1/task-sessions/{session_id}/messages?limit={MESSAGES}"

        def rest_worker() -> object:
            connection = http.client.HTTPConnection("127.0.0.1", stack.rest_port, timeout=10)

            def call() -> None:
                connection.request("GET", path)
                response = connection.getresponse()
                response.read()
                assert response.status == 200
            return call

        grpc_client = ShellExecClient(stack.grpc_target)

        def grpc_worker() -> object:
            return lambda: grpc_client.list_messages(session_id, limit=MESSAGES)

        grpc_rate, rest_rate = interleaved_medians(
            lambda: _rate(grpc_worker, SECONDS), lambda: _rate(rest_worker, SECONDS), ROUNDS)
        grpc_client.close()
    ratio = rest_rate / grpc_rate
    met = ratio >= TARGET
    conclude("REST via Envoy vs direct gRPC (list call, 8 threads)",
             f"list {MESSAGES} messages: gRPC {grpc_rate:.0f}/s, REST via Envoy {rest_rate:.0f}/s",
             {"grpc_per_s": grpc_rate, "rest_per_s": rest_rate}, ratio, f">= {TARGET}", met)


if __name__ == "__main__":
    main()
