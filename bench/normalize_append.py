"""Normalize append cost: folding one 1 KiB `_meta.terminal_output_delta` into a command that
already holds 250 KiB costs about the same as into one holding 1 KiB (target: ratio <= 1.3).

Pure fold, no I/O. Each round builds fresh states (so every fold takes the ordinary path of a
live stream, never a branch of an older state), then times a few consecutive 1 KiB deltas.
The two sizes are measured in alternating rounds and the best round of each is kept. Also
reported: the same for the store's path (fold + `body_change` + `summary()`), and the
amortized cost of streaming far past the 256 KiB bound (cut-off and compaction included).
"""

from __future__ import annotations

from collections.abc import Callable

from shellexec.normalize import ShellState, body_change, fold, new_state

from results import per_call_seconds, record

KIB = 1024
ROUNDS = 150
DELTAS_PER_ROUND = 4
TARGET = 1.3
STREAMED_KIB = 4096

START = {
    "sessionUpdate": "tool_call",
    "toolCallId": "call_bench",
    "kind": "execute",
    "status": "in_progress",
    "title": "tail -f log",
    "rawInput": {"command": ["/bin/bash", "-lc", "tail -f log"], "cwd": "/repo"},
}


def _delta() -> dict[str, object]:
    return {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "call_bench",
        "_meta": {"terminal_output_delta": {"data": "x" * (KIB - 1) + "\n"}},
    }


def _holding(kib: int) -> ShellState:
    state = fold(new_state(), START)
    for _ in range(kib):
        state = fold(state, _delta())
    return state


def _fold_only(state: ShellState, delta: dict[str, object]) -> ShellState:
    return fold(state, delta)


def _store_path(state: ShellState, delta: dict[str, object]) -> ShellState:
    after = fold(state, delta)
    body_change(state.stdout, after.stdout)
    after.summary()
    return after


Step = Callable[[ShellState, dict[str, object]], ShellState]


def _round(kib: int, step: Step) -> float:
    """Seconds per delta over a few consecutive deltas into a fresh state holding `kib`."""
    current = [_holding(kib)]
    delta = _delta()

    def one() -> None:
        current[0] = step(current[0], delta)

    return per_call_seconds(one, repeat=1, number=DELTAS_PER_ROUND)


def _best(step: Step) -> tuple[float, float]:
    small, large = float("inf"), float("inf")
    for _ in range(ROUNDS):
        small = min(small, _round(1, step))
        large = min(large, _round(250, step))
    return small, large


def _streamed() -> float:
    """Seconds per 1 KiB delta, amortized over STREAMED_KIB (the bound is passed 16 times)."""
    state = fold(new_state(), START)
    delta = _delta()

    def stream() -> None:
        current = state
        for _ in range(STREAMED_KIB):
            current = fold(current, delta)

    return per_call_seconds(stream, repeat=3, number=1) / STREAMED_KIB


def main() -> None:
    fold_small, fold_large = _best(_fold_only)
    store_small, store_large = _best(_store_path)
    streamed = _streamed()
    ratio, store_ratio = fold_large / fold_small, store_large / store_small
    met = ratio <= TARGET and store_ratio <= TARGET
    print(
        f"fold 1 KiB delta: holding 1 KiB {fold_small * 1e6:.2f} us, "
        f"holding 250 KiB {fold_large * 1e6:.2f} us, ratio {ratio:.2f}"
    )
    print(
        f"fold + body_change + summary: holding 1 KiB {store_small * 1e6:.2f} us, "
        f"holding 250 KiB {store_large * 1e6:.2f} us, ratio {store_ratio:.2f}"
    )
    print(f"streaming {STREAMED_KIB} KiB past the bound: {streamed * 1e6:.2f} us per 1 KiB delta")
    print(f"target: ratio <= {TARGET}: {'MET' if met else 'NOT MET'}")
    record(
        "normalize append (fold one 1 KiB delta at 250 KiB vs 1 KiB held)",
        {
            "fold_1k_us": fold_small * 1e6,
            "fold_250k_us": fold_large * 1e6,
            "ratio": ratio,
            "store_path_ratio": store_ratio,
            "streamed_us_per_kib": streamed * 1e6,
        },
        f"ratio <= {TARGET}",
        met,
    )


if __name__ == "__main__":
    main()
