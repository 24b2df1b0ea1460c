"""Browser-facing views built in-process, for tests of what carries them (the feed's hub,
the weights of projection.weight)."""

from __future__ import annotations

from shellexec.normalize import OutputSummary
from shellexec.projection import MessageView, ShellExecView


def shell_view(command: str, work_dir: str = "/w") -> MessageView:
    """A running shell message whose content and title are its command, as a tool call's are."""
    summary = OutputSummary(exit_code=None, truncated=False, has_output=False,
                            stdout_bytes=0, stderr_bytes=0)
    return MessageView(id="msg_1", session_id="ses_1", task_id="t", turn_id="",
                       author_type="agent", type="tool_call", content=command, created_at=1,
                       updated_at=1, status="running", title=command,
                       shell_exec=ShellExecView(command, work_dir, summary, "running"))
