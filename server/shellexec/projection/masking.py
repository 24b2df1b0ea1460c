"""Whether served text is masked, and masking a projected value (see `secrets`)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from shellexec.normalize import ShellOutput, ShellRecord
from shellexec.projection.masked_texts import MaskedTexts
from shellexec.projection.secrets import mask_secrets
from shellexec.rules.limits import MAX_OUTPUT_STREAM_BYTES


@dataclass(frozen=True, slots=True)
class Masking:
    """Masks credential forms in served text when `enabled` (a setting, on by default);
    the texts that were costly to mask are kept in `kept`, when given (the server's reads)."""

    enabled: bool = True
    kept: MaskedTexts | None = field(default=None, compare=False)

    def text(self, value: str) -> str:
        return self._masked(value, head_cut=False) if self.enabled else value

    def output(self, output: ShellOutput) -> ShellOutput:
        """`output` masked; a stream cut at the bound lost its head, so it may begin inside
        a secret whose start was cut off."""
        if not self.enabled:
            return output
        return replace(output,
                       stdout=None if output.stdout is None else self._masked(
                           output.stdout, head_cut=_may_be_cut(output.stdout, output)),
                       stderr=None if output.stderr is None else self._masked(
                           output.stderr, head_cut=_may_be_cut(output.stderr, output)))

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

    def _masked(self, value: str, *, head_cut: bool) -> str:
        if self.kept is None:
            return mask_secrets(value, head_cut=head_cut)
        return self.kept.masked(value, head_cut=head_cut)


def _may_be_cut(text: str, output: ShellOutput) -> bool:
    """Whether `text`, one stream of `output`, may have lost its head: `truncated` says only
    that one of the two streams did, and a cut stream holds the bound's bytes, less at most
    the 3 of a character that did not fit. (A stream of exactly that many bytes that was
    never cut counts too: it cannot be told apart.)"""
    least = MAX_OUTPUT_STREAM_BYTES - 3
    if not output.truncated or len(text) * 4 < least:
        return False
    return len(text) >= least or len(text.encode("utf-8", "surrogatepass")) >= least


NO_MASKING = Masking(enabled=False)
