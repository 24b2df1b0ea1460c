"""List flatness: listing 200 shell messages whose outputs are 256 KiB each costs about the
same as listing 200 with empty outputs (target: ratio <= 1.2). Through gRPC."""

from __future__ import annotations

from shellexec.client import ShellExecClient

from _service import conclude, interleaved_medians, running_stack, seconds_per_call

KIB = 1024
MESSAGES = 200
CALLS = 30
ROUNDS = 7
TARGET = 1.2


def _fill(client: ShellExecClient, session_id: str, output_bytes: int) -> None:
    for index in range(MESSAGES):
        call_id = f"call-{index}"
        client.publish(session_id, {
            "sessionUpdate": "tool_call", "toolCallId": call_id, "kind": "execute",
            "title": f"cat file-{index}", "rawInput": {"command": f"cat file-{index}"}})
        output = "y" * output_bytes
        client.publish(session_id, {
            "sessionUpdate": "tool_call_update", "toolCallId": call_id, "status": "completed",
            "rawOutput": {"formatted_output": output, "exit_code": 0}})


def measure(client: ShellExecClient) -> tuple[float, float]:
    """Seconds per list call with empty and with 256 KiB outputs (medians of the rounds)."""
    empty = client.create_session("bench-list-empty").id
    full = client.create_session("bench-list-full").id
    _fill(client, empty, 0)
    _fill(client, full, 256 * KIB)

    def list_of(session_id: str) -> float:
        return seconds_per_call(lambda: client.list_messages(session_id, limit=MESSAGES),
                                CALLS)

    return interleaved_medians(lambda: list_of(empty), lambda: list_of(full), ROUNDS)


def main() -> None:
    with running_stack() as stack, stack.client() as client:
        at_empty, at_full = measure(client)
    ratio = at_full / at_empty
    met = ratio <= TARGET
    conclude("list flatness (200 messages, 256 KiB outputs vs empty)",
             f"list {MESSAGES} messages: empty outputs {at_empty * 1e3:.3f} ms, "
             f"256 KiB outputs {at_full * 1e3:.3f} ms",
             {"empty_ms": at_empty * 1e3, "full_ms": at_full * 1e3}, ratio, f"<= {TARGET}", met)


if __name__ == "__main__":
    main()
