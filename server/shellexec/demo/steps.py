"""What a demo script is made of: plain data, played in order by `player`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

Update = dict[str, Any]


@dataclass(frozen=True)
class StartTurn:
    """The user sends a prompt: a new turn begins."""


@dataclass(frozen=True)
class EndTurn:
    """The prompt ends; tool calls still running become `cancelled`, keeping their output."""

    stop_reason: str = "end_turn"


@dataclass(frozen=True)
class Publish:
    """One ACP `params.update`, exactly as an agent would send it."""

    update: Update


@dataclass(frozen=True)
class Pause:
    """Wait, so someone watching sees the command run (scaled by the player's pace)."""

    seconds: float


Step = StartTurn | EndTurn | Publish | Pause
