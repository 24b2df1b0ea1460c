"""Whether served text is masked, and masking a projected value (see `secrets`)."""

from __future__ import annotations

from dataclasses import dataclass, replace

from shellexec.normalize import ShellOutput, ShellView
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

    def view(self, view: ShellView) -> ShellView:
        """A normalized record with its command, directory, title, description and output
        masked."""
        if not self.enabled:
            return view
        return replace(view, command=self._optional(view.command),
                       work_dir=self._optional(view.work_dir), title=self._optional(view.title),
                       description=self._optional(view.description),
                       output=self.output(view.output))

    def _optional(self, value: str | None) -> str | None:
        return None if value is None else self.text(value)


NO_MASKING = Masking(enabled=False)
