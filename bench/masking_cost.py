"""Masking cost in hostile text (ADRs 0141 to 0143): every served read of an output masks it
again, so what one published output costs to mask is paid on every poll of it.

Each family of text below is built at 64 KiB and at 256 KiB and masked whole. Targets:
- linear: for every family, masking four times the text costs at most 1.5 times four times
  as much (a quadratic cost gives 4);
- bounded: at 256 KiB, the dearest family costs at most 60 times what plain text of the same
  size costs. Before ADR 0142, a value of backspace overstrikes cost about 120 times. After
  it, the same code measured 27 to 44 times on one day: plain text is scanned in C, hostile
  text costs Python steps per control, and the two move differently with the machine's load.

Families are timed in alternating rounds, so all see the same machine noise, and the best
round of each is kept.
"""

from __future__ import annotations

from collections.abc import Callable

from shellexec.projection.secrets import mask_secrets

from results import per_call_seconds, record

KIB = 1024
SMALL, LARGE = 64 * KIB, 256 * KIB
ROUNDS = 5
LINEAR_TARGET = 1.5
BOUND_TARGET = 60.0


def _repeated(head: str, unit: str) -> Callable[[int], str]:
    """`head` and then `unit` as often as fits in `size` characters."""
    return lambda size: head + unit * ((size - len(head)) // len(unit))


FAMILIES: dict[str, Callable[[int], str]] = {
    "plain": _repeated("", "compiling module 42 of 99 ok\n"),
    # A secret's value made of overstruck cells, of 8-bit CSI codes, of stray controls.
    "overstrike": _repeated("TOKEN=", "a\bb"),
    "csi8": _repeated("TOKEN=", "\x9b="),
    "controls": _repeated("TOKEN=", "a\x01"),
    # A value coloured character by character, which only the shown text holds, and one that
    # the stored text holds whole, masked round its colour codes (ADR 0143).
    "coloured_value": _repeated("\x1b[1mTOKEN\x1b[m=", "\x1b[1mv\x1b[m"),
    "csi_value": _repeated("TOKEN=", "v\x1b[m"),
    # Listings of secrets, plain and coloured: one match per line.
    "assignments": _repeated("", "TOKEN=abc\n"),
    "coloured_assignments": _repeated("", "TOKEN=abc\x1b[0m\n"),
    # A scheme's characters run on without a `://` (ADR 0141).
    "scheme_run": _repeated("", "a."),
    # A value, a run of blanks, one more character: the value's end was found lazily, so each
    # blank read the rest of the run again; and a run of JWT starts, each of whose bodies
    # read the rest of the run (2026-12-05).
    "trailing_blanks": lambda size: "TOKEN=a" + " \t" * ((size - 8) // 2) + "x",
    # Blanks after `=` on a line that a `\r` keeps from ending: each was handed back in turn.
    "blanks_before_cr": lambda size: "TOKEN=" + " " * (size - 8) + "\rx",
    "jwt_starts": _repeated("", "-eyJ"),
}


def _seconds(text: str) -> float:
    return per_call_seconds(lambda: mask_secrets(text), repeat=1, number=1)


def _best_times() -> dict[str, tuple[float, float]]:
    texts = {name: (build(SMALL), build(LARGE)) for name, build in FAMILIES.items()}
    best = {name: (float("inf"), float("inf")) for name in FAMILIES}
    for _ in range(ROUNDS):
        for name, (small, large) in texts.items():
            low, high = best[name]
            best[name] = (min(low, _seconds(small)), min(high, _seconds(large)))
    return best


def main() -> None:
    best = _best_times()
    plain = best["plain"][1]
    growth = {name: large / (4 * small) for name, (small, large) in best.items()}
    for name, (small, large) in best.items():
        print(f"{name:22} 64 KiB {small * 1e3:7.2f} ms   256 KiB {large * 1e3:7.2f} ms   "
              f"growth {growth[name]:.2f}   vs plain {large / plain:5.1f}")
    worst_growth = max(growth.values())
    dearest = max(large for _, large in best.values()) / plain
    met = worst_growth <= LINEAR_TARGET and dearest <= BOUND_TARGET
    print(f"worst growth {worst_growth:.2f} (target <= {LINEAR_TARGET}), dearest family "
          f"{dearest:.1f}x plain (target <= {BOUND_TARGET:g}): {'MET' if met else 'NOT MET'}")
    record(
        "masking cost (12 hostile families, 256 KiB vs 64 KiB and vs plain text)",
        {"plain_256k_ms": plain * 1e3, "worst_growth": worst_growth,
         "dearest_vs_plain": dearest},
        f"growth <= {LINEAR_TARGET}, dearest <= {BOUND_TARGET:g}x plain",
        met,
    )


if __name__ == "__main__":
    main()
