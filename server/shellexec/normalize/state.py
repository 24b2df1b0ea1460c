"""The normalization state of one tool call: everything the fold has learned so far.

A `ShellState` is immutable; `fold` returns a new one. It holds what the agent said
(command, directory, its own status, the exit code and how trusted its source is), the two
bounded output streams, and the few facts the rules below need to stay exact:

- `stdout_final` / `stderr_final`: an authoritative `rawOutput` text (or, for stdout,
  cumulative `content` text) replaced the stream on a terminal update, so live text arriving
  later is already part of it and is ignored;
- `stdout_fallback`: stdout holds a *plain* `rawOutput` text (bare text, final or not), which
  only stands in until `_meta` terminal output arrives: the first such output replaces it;
- `live_source`: `terminal` once any `_meta` terminal output arrived (it is exact, so
  cumulative `content` text, a presentation copy of it, and plain `rawOutput` text are ignored
  afterwards), else `content` once cumulative content fed stdout;
- `echo`: whether the `$ <command>` line may still lead a stream fed chunk by chunk;
- `terminal_chunks`: `_meta.terminal_output` is known to carry chunks (Codex), not snapshots;
- `terminal_snapshots`: it is known to carry the whole output so far (Claude), which replaces
  the stream; chunks win when both are signalled.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from shellexec.normalize.agents import agent_of
from shellexec.normalize.exit_codes import ExitRank
from shellexec.normalize.output import OutputSummary, summary_of
from shellexec.normalize.status import shell_result, shell_status
from shellexec.normalize.text import OutputText, valid_text
from shellexec.normalize.vocabulary import Result, ShellStatus
from shellexec.vocabulary import AGENT_CLAUDE, AGENT_CODEX, STATUS_PENDING

LiveSource = Literal["none", "content", "terminal"]
EchoPhase = Literal["pending", "separator", "done"]

LIVE_SOURCES: tuple[LiveSource, ...] = ("none", "content", "terminal")
ECHO_PHASES: tuple[EchoPhase, ...] = ("pending", "separator", "done")


@dataclass(frozen=True, slots=True)
class ShellState:
    """What is known about one tool call after folding its updates (immutable).

    `status`, `result` and `summary()` are the public face of it in O(1); `shell_record()` adds the
    output bodies.
    """

    agent: str | None = None
    """The optional agent hint given to `new_state` (e.g. `"codex"`), or, when it names no known
    agent, the agent the call's shape revealed (`dialects`), so later updates read alike."""
    tool_call_id: str | None = None
    kind: str | None = None
    """The latest ACP `kind` the agent sent."""
    tool: str | None = None
    """The tool's own name (lower case) from the first update whose `_meta` names it
    (`shell_tools.tool_name`): an agent may name it only in the `tool_call`."""
    is_shell: bool = False
    """Whether any update said this call runs a shell command (see `commands`)."""
    command: str | None = None
    """The command as a person would type it; None until an update names one."""
    work_dir: str | None = None
    """The command's directory (ACP's `cwd`); None until an update reports one."""
    title: str | None = None
    """The latest non-empty title: what a client shows when no command is known."""
    description: str | None = None
    reported_status: ShellStatus = STATUS_PENDING
    """The agent's own status, moved forward only (see `status`)."""
    cancelled_by_prompt: bool = False
    """The prompt ended while the call was not terminal (`cancel`)."""
    exit_code: int | None = None
    exit_rank: ExitRank = ExitRank.NONE
    """The rank of the source `exit_code` came from; a lower rank never overrides it."""
    stdout: OutputText | None = None
    stderr: OutputText | None = None
    stdout_final: bool = False
    stderr_final: bool = False
    stdout_fallback: bool = False
    live_source: LiveSource = "none"
    echo: EchoPhase = "pending"
    terminal_chunks: bool = False
    terminal_snapshots: bool = False
    stdout_authoritative: bool = False
    """stdout is Codex's combined end text on a finished call (`streams.apply_final`), which
    the agent's own ACP terminal does not replace: the spec makes it Codex's authoritative
    output, and that terminal's chunks are only its capped live deltas."""
    host_output: bool = False
    """An ACP terminal (v2 terminal updates, or one the bridge hosts) owns the output: its
    exact transcript, not the agent's report of it, is stdout (see `terminal_fold`)."""
    host_client: bool = False
    """The terminal is one a client hosts (its updates name the call in
    `_meta.shellexec_tool_call_id`, as the bridge's do): its transcript is the process's own,
    which no text of the agent's replaces, Codex's end text included."""
    host_pending: bytes = b""
    """The last bytes of the terminal's output when they end inside a UTF-8 sequence: the
    next chunk completes them."""
    host_signal: str | None = None
    """The signal that ended the terminal's process, when one did."""

    @property
    def status(self) -> ShellStatus:
        """The public status: `pending`, `running`, `complete`, `failed` or `cancelled`."""
        return shell_status(self.reported_status, self.cancelled_by_prompt, self.exit_code,
                            signalled=self.host_signal is not None)

    @property
    def result(self) -> Result:
        """The public result: `running`, `success`, `failure` or `unknown`."""
        return shell_result(self.status, self.exit_code)

    @property
    def truncated(self) -> bool:
        """Whether either output stream hit the bound."""
        return any(stream is not None and stream.truncated for stream in self._streams())

    def summary(self) -> OutputSummary:
        """The body-free output summary, in O(1) (no output text is joined)."""
        return summary_of(
            self.exit_code,
            self.truncated,
            0 if self.stdout is None else self.stdout.byte_count,
            0 if self.stderr is None else self.stderr.byte_count,
        )

    def _streams(self) -> tuple[OutputText | None, OutputText | None]:
        return self.stdout, self.stderr


def new_state(agent: str | None = None) -> ShellState:
    """The state of a tool call nothing is known about yet.

    `agent` is an optional hint (`"codex"`, `"claude"`...). Every rule works from the payload
    shapes alone; the hint only settles what a shape cannot: with Codex, `_meta.terminal_output`
    is read as chunks even before a Codex-shaped update arrives, and with Claude as snapshots.
    """
    hint = valid_text(agent).strip() if isinstance(agent, str) else ""
    known = agent_of(hint)
    return ShellState(agent=hint or None, terminal_chunks=AGENT_CODEX in hint.lower(),
                      terminal_snapshots=known == AGENT_CLAUDE)
