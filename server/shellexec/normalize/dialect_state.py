"""What an agent's dialect (`dialects.AgentReading`) adds to the state, around the fold's steps.

- Before them (`with_dialect`): the agent recognised from the update's shape is kept in
  `ShellState.agent` when the hint names no known agent, so the call's later updates, which
  carry no mark of their agent, are read in the same dialect; and an agent's own shell signal
  (`shell_tools`) marks the call as a shell command, for good.
- After them (`with_dialect_output`): live output from the agent's own `_meta` key (Goose),
  stdout as a terminal delta and stderr apart. The exit code from the agent's text is ranked by
  the fold itself (`ExitRank.MARKUP`).
"""

from __future__ import annotations

from dataclasses import replace

from shellexec.normalize.agents import agent_of
from shellexec.normalize.dialects import AgentReading
from shellexec.normalize.live_meta import append_stderr
from shellexec.normalize.state import ShellState
from shellexec.normalize.streams import append_chunk


def with_dialect(state: ShellState, reading: AgentReading) -> ShellState:
    """`state` knowing the agent the update revealed, the tool it names and whether the call
    is a shell command."""
    if reading.agent is not None and agent_of(state.agent) is None:
        state = replace(state, agent=reading.agent)
    if reading.shell and not state.is_shell:
        state = replace(state, is_shell=True)
    if reading.tool is not None and state.tool is None:
        state = replace(state, tool=reading.tool)
    return state


def with_dialect_output(state: ShellState, reading: AgentReading) -> tuple[ShellState, bool]:
    """`state` after the agent's own live output, and whether there was any."""
    heard = False
    if reading.stdout_delta is not None:
        state, heard = append_chunk(state, reading.stdout_delta), True
    if reading.stderr_delta is not None:
        state, heard = append_stderr(state, reading.stderr_delta), True
    return state, heard
