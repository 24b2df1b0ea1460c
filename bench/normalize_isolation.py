"""A small call's latency while others flood the largest Normalize requests the limits allow
(target: the p99 of GetSession under the flood at most 5x its idle p99).

Two client processes loop the largest allowed Normalize request (MAX_NORMALIZE_UPDATES
updates holding MAX_REQUEST_VALUES JSON values and nearly MAX_NORMALIZE_BYTES, sent as
pre-serialized bytes) while this process times GetSession on one connection. Idle and flooded
phases alternate, so both see the same machine noise; each figure is the median of its
phases' p99. The same run is repeated with conversion workers off (everything on the event
loop) to show what the workers buy; that figure is informative, not the target.
"""

from __future__ import annotations

import multiprocessing
import statistics
import time
from multiprocessing.synchronize import Event

import grpc
from google.protobuf import struct_pb2

from shellexec.rules import limits
from shellexec.v1 import shell_exec_service_pb2 as pb

from _service import conclude, p99_seconds, running_stack

FLOODERS = 2
PHASE_SECONDS = 3.0
ROUNDS = 3
CALL_TIMEOUT = 10
TARGET = 5.0
NORMALIZE = "/shellexec.v1.ShellExecService/NormalizeShellExec"
GET_SESSION = "/shellexec.v1.ShellExecService/GetSession"
# An update's own values besides its list: the object, sessionUpdate, toolCallId, _meta, the
# delta object, its data, the list itself.
_OWN_VALUES = 7


def largest_normalize_request() -> bytes:
    """A request at the limits: every update, every value, nearly every byte."""
    request = pb.NormalizeShellExecRequest(agent="codex")
    start = request.updates.add()
    start.struct_value.update({"sessionUpdate": "tool_call", "toolCallId": "c", "kind": "execute",
                               "title": "build", "rawInput": {"command": "make"}})
    count = limits.MAX_NORMALIZE_UPDATES - 1
    per_list = (limits.MAX_REQUEST_VALUES - 8) // count - _OWN_VALUES
    sample = _delta("", per_list).ByteSize()
    padding = (limits.MAX_NORMALIZE_BYTES - start.ByteSize() - 64 * 1024) // count - sample
    for _ in range(count):
        request.updates.append(_delta("x" * padding, per_list))
    return bytes(request.SerializeToString())


def _delta(data: str, values: int) -> struct_pb2.Value:
    update = struct_pb2.Value()
    update.struct_value.update({
        "sessionUpdate": "tool_call_update", "toolCallId": "c",
        "_meta": {"terminal_output_delta": {"data": data}}, "extra": list(range(values))})
    return update


def _flood(target: str, raw: bytes, stop: Event) -> None:
    with grpc.insecure_channel(target, options=[("grpc.max_send_message_length", -1)]) as channel:
        normalize = channel.unary_unary(NORMALIZE)
        while not stop.is_set():
            normalize(raw, timeout=60)


def measure(conversion_workers: str) -> tuple[float, float]:
    """(idle p99, flooded p99) of GetSession, in seconds, medians over the rounds."""
    with running_stack(SHELLEXEC_CONVERSION_WORKERS=conversion_workers) as stack:
        with stack.client() as client:
            session_id = client.create_session("bench-isolation").id
        raw = largest_normalize_request()
        context = multiprocessing.get_context("spawn")
        with grpc.insecure_channel(stack.grpc_target,
                                   options=[("grpc.max_send_message_length", -1)]) as channel:
            pb.NormalizeShellExecResponse.FromString(channel.unary_unary(NORMALIZE)(raw))
            get = channel.unary_unary(GET_SESSION)
            request = pb.GetSessionRequest(session_id=session_id).SerializeToString()
            p99_seconds(get, request, 1.0, CALL_TIMEOUT)  # warm up
            idle, flooded = [], []
            for _ in range(ROUNDS):
                idle.append(p99_seconds(get, request, PHASE_SECONDS, CALL_TIMEOUT))
                stop = context.Event()
                flooders = [context.Process(target=_flood, args=(stack.grpc_target, raw, stop))
                            for _ in range(FLOODERS)]
                for process in flooders:
                    process.start()
                time.sleep(1.0)  # the flood under way (processes started, requests in flight)
                flooded.append(p99_seconds(get, request, PHASE_SECONDS, CALL_TIMEOUT))
                stop.set()
                for process in flooders:
                    process.join(timeout=60)
        return statistics.median(idle), statistics.median(flooded)


def main() -> None:
    idle, flooded = measure("1")
    inline_idle, inline_flooded = measure("0")
    ratio = flooded / idle
    met = ratio <= TARGET
    conclude("normalize isolation (GetSession p99, 2 clients flooding the largest Normalize)",
             f"GetSession p99 idle {idle * 1e3:.2f} ms, flooded {flooded * 1e3:.2f} ms; "
             f"without workers {inline_idle * 1e3:.2f} ms -> {inline_flooded * 1e3:.2f} ms",
             {"idle_p99_ms": idle * 1e3, "flooded_p99_ms": flooded * 1e3,
              "inline_ratio": inline_flooded / inline_idle}, ratio, f"<= {TARGET:g}", met)


if __name__ == "__main__":
    main()
