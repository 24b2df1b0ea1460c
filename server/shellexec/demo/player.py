"""Plays a demo script into a new session through the public REST API."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from shellexec.demo.rest import RestApi
from shellexec.demo.steps import EndTurn, Pause, Publish, StartTurn, Step


@dataclass
class Player:
    """`pace` scales every pause: 1 plays in real time, 0 as fast as the API answers."""

    api: RestApi
    pace: float = 1.0
    sleep: Callable[[float], None] = time.sleep
    _sequence: int = field(default=0, init=False)
    _turn: str | None = field(default=None, init=False)

    def create(self, task_id: str, agent: str) -> str:
        return str(self.api.create_session(task_id, agent)["id"])

    def play(self, session_id: str, steps: Sequence[Step]) -> None:
        for step in steps:
            self.step(session_id, step)

    def step(self, session_id: str, step: Step) -> None:
        if isinstance(step, Publish):
            # A sequence number per update makes a retried publish idempotent.
            self._sequence += 1
            self.api.publish(session_id, step.update, self._sequence)
        elif isinstance(step, Pause):
            if self.pace > 0:
                self.sleep(step.seconds * self.pace)
        elif isinstance(step, StartTurn):
            self._turn = self.api.start_turn(session_id)
        elif isinstance(step, EndTurn) and self._turn is not None:
            self.api.complete_turn(session_id, self._turn, step.stop_reason)
            self._turn = None
