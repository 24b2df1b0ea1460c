"""Whether served text is masked, and masking a projected value (see `secrets`)."""

from __future__ import annotations

from dataclasses import dataclass, replace

from shellexec.normalize import ShellOutput, ShellRecord
from shellexec.projection.secrets import mask_secrets


@dataclass(frozen=True, slots=True)
class Masking:
    """Masks credential forms in served text when `enabled` (a setting, on by default)."""

    enabled: bool = True

    def text(self, value: str) -> str:
        return mask_secrets(value) if self.enabled else value

    def output(self, output: ShellOutput) -> ShellOutput:
        """`output` masked; a truncated output lost its head, so it may begin inside a
        secret whose start was cut off."""
        if not self.enabled:
            return output
        cut = output.truncated
        return replace(output,
                       stdout=None if output.stdout is None
                       else mask_secrets(output.stdout, head_cut=cut),
                       stderr=None if output.stderr is None
                       else mask_secrets(output.stderr, head_cut=cut))

    def record(self, record: ShellRecord) -> ShellRecord:
        """A normalized record with its command, directory, title, description and output
        masked."""
        if not self.enabled:
            return record
        return replace(record, command=self._optional(record.command),
                       work_dir=self._optional(record.work_dir),
                       title=self._optional(record.title),
                       description=self._optional(record.description),
                       output=self.output(record.output))

    def _optional(self, value: str | None) -> str | None:
        return None if value is None else self.text(value)


NO_MASKING = Masking(enabled=False)
