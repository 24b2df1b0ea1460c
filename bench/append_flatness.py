"""Append flatness: publishing a 1 KiB delta to a command already holding 250 KiB costs about
the same as to one holding 1 KiB (target: ratio <= 1.3). Through gRPC, on the real server."""

from __future__ import annotations

import itertools

from shellexec.client import ShellExecClient

from _service import conclude, interleaved_medians, running_stack, seconds_per_call

KIB = 1024
COMMANDS = 60
ROUNDS = 7
TARGET = 1.3


def _start(client: ShellExecClient, session_id: str, call_id: str) -> None:
    client.publish(session_id, {
        "sessionUpdate": "tool_call", "toolCallId": call_id, "kind": "execute",
        "title": "tail -f log", "rawInput": {"command": "tail -f log"}})


def _delta(call_id: str, size: int) -> dict[str, object]:
    return {"sessionUpdate": "tool_call_update", "toolCallId": call_id,
            "_meta": {"terminal_output_delta": {"data": "x" * (size - 1) + "\n"}}}


def _commands(client: ShellExecClient, session_id: str, prefix: str, held: int) -> list[str]:
    ids = [f"{prefix}-{index}" for index in range(COMMANDS)]
    for call_id in ids:
        _start(client, session_id, call_id)
        for _ in range(held // (8 * KIB)):
            client.publish(session_id, _delta(call_id, 8 * KIB))
        client.publish(session_id, _delta(call_id, held % (8 * KIB) or KIB))
    return ids


def measure(client: ShellExecClient) -> tuple[float, float]:
    """Seconds per 1 KiB append to commands holding 1 KiB and 250 KiB (medians)."""
    session_id = client.create_session("bench-append").id
    small = _commands(client, session_id, "small", KIB)
    large = _commands(client, session_id, "large", 250 * KIB)
    delta_small = itertools.cycle(small)
    delta_large = itertools.cycle(large)

    def publish_to(ids: itertools.cycle[str]) -> float:
        return seconds_per_call(
            lambda: client.publish(session_id, _delta(next(ids), KIB)), COMMANDS)

    return interleaved_medians(
        lambda: publish_to(delta_small), lambda: publish_to(delta_large), ROUNDS)


def main() -> None:
    with running_stack() as stack, stack.client() as client:
        at_small, at_large = measure(client)
    ratio = at_large / at_small
    met = ratio <= TARGET
    conclude("append flatness (gRPC publish, 1 KiB delta at 250 KiB vs 1 KiB held)",
             f"append 1 KiB delta: holding 1 KiB {at_small * 1e3:.3f} ms, "
             f"holding 250 KiB {at_large * 1e3:.3f} ms",
             {"held_1k_ms": at_small * 1e3, "held_250k_ms": at_large * 1e3}, ratio,
             f"<= {TARGET}", met)


if __name__ == "__main__":
    main()
