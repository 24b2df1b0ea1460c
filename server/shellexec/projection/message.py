"""The browser-facing view of a message row, its text masked as `Masking` says."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from shellexec.normalize import OutputSummary, shell_result
from shellexec.projection.masking import Masking
from shellexec.projection.secrets import may_hold_secrets
from shellexec.store.models import Message
from shellexec.vocabulary import MESSAGE_TEXT, Result, as_shell_status


@dataclass(frozen=True, slots=True)
class ShellExecView:
    """A shell command as a browser sees it: command, working directory, output summary, result.

    `result` is computed from the stored status and exit code by the normalizer's own rule
    (`normalize.shell_result`), the one the fold uses, so it needs no column (ADR 0009).
    """

    command: str
    work_dir: str
    output: OutputSummary
    result: Result


@dataclass(frozen=True, slots=True)
class MessageView:
    """A message as every browser-facing payload carries it."""

    id: str
    session_id: str
    task_id: str
    turn_id: str
    author_type: str
    type: str
    content: str
    created_at: int
    updated_at: int
    status: str
    title: str
    shell_exec: ShellExecView | None


def _shell_exec(row: Message, mask: Callable[[str], str]) -> ShellExecView | None:
    if not row.is_shell:
        return None
    summary = OutputSummary(
        exit_code=row.exit_code,
        truncated=bool(row.truncated),
        has_output=bool(row.has_output),
        stdout_bytes=int(row.stdout_bytes),
        stderr_bytes=int(row.stderr_bytes),
    )
    result = shell_result(as_shell_status(row.status), summary.exit_code)
    return ShellExecView(command=mask(row.command), work_dir=mask(row.work_dir),
                         output=summary, result=result)


def _row_mask(row: Message, masking: Masking) -> Callable[[str], str]:
    """`masking.text` for the texts of `row`: nothing when none of them may hold a secret
    (one check for them all), else once per distinct text (a shell row's content is its
    command or title). Only a chat message's text may still grow; a tool call's texts are
    whole values."""
    if not masking.enabled or not may_hold_secrets(
            "\n".join((row.content, row.title, row.command, row.work_dir))):
        return _unchanged
    seen: dict[str, str] = {}
    whole = row.type != MESSAGE_TEXT

    def mask(text: str) -> str:
        if text not in seen:
            seen[text] = masking.text(text, whole=whole)
        return seen[text]

    return mask


def _unchanged(text: str) -> str:
    return text


def project_message(row: Message, masking: Masking) -> MessageView:
    """Projects a summary row (see `store.queries.SUMMARY_COLUMNS`). Every text a browser
    reads is masked here, so no route can serve it unmasked; the byte counts of the summary
    stay true because masking keeps the byte length."""
    mask = _row_mask(row, masking)
    return MessageView(
        id=row.id,
        session_id=str(row.session_id),
        task_id=row.task_id,
        turn_id=row.turn_id,
        author_type=row.author_type,
        type=row.type,
        content=mask(row.content),
        created_at=int(row.created_at),
        updated_at=int(row.updated_at),
        status=row.status,
        title=mask(row.title),
        shell_exec=_shell_exec(row, mask),
    )
