"""Whether served text is masked, and masking a projected value (see `secrets`)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from shellexec.normalize import ShellOutput, ShellRecord
from shellexec.projection.masked_texts import MaskedTexts
from shellexec.projection.secrets import mask_secrets
from shellexec.rules.limits import MAX_OUTPUT_STREAM_BYTES, MAX_STORED_TEXT_BYTES
from shellexec.vocabulary import is_terminal


@dataclass(frozen=True, slots=True)
class Masking:
    """Masks credential forms in served text when `enabled` (a setting, on by default);
    the texts that were costly to mask are kept in `kept`, when given (the server's reads)."""

    enabled: bool = True
    kept: MaskedTexts | None = field(default=None, compare=False)

    def text(self, value: str, *, whole: bool = False) -> str:
        """`value` masked; `whole` when nothing is ever appended to it (a command, a title),
        so a token's prefix at its end is not taken for a token still arriving. A value at
        the stored bound may have lost its end, inside a token: its end stays open."""
        if not self.enabled:
            return value
        return self._masked(value, head_cut=False,
                            open_end=not whole or _at_bound(value, MAX_STORED_TEXT_BYTES))

    def output(self, output: ShellOutput, *, finished: bool = False) -> ShellOutput:
        """`output` masked; a stream cut at the bound lost its head, so it may begin inside
        a secret whose start was cut off. The output of a `finished` command gets nothing
        more, so its end is not taken for a token still arriving."""
        if not self.enabled:
            return output
        return replace(output,
                       stdout=None if output.stdout is None else self._masked(
                           output.stdout, head_cut=_may_be_cut(output.stdout, output),
                           open_end=not finished),
                       stderr=None if output.stderr is None else self._masked(
                           output.stderr, head_cut=_may_be_cut(output.stderr, output),
                           open_end=not finished))

    def record(self, record: ShellRecord) -> ShellRecord:
        """A normalized record with its command, directory, title, description and output
        masked."""
        if not self.enabled:
            return record
        return replace(record, command=self._whole(record.command),
                       work_dir=self._whole(record.work_dir),
                       title=self._whole(record.title),
                       description=self._whole(record.description),
                       output=self.output(record.output, finished=is_terminal(record.status)))

    def _whole(self, value: str | None) -> str | None:
        return None if value is None else self.text(value, whole=True)

    def _masked(self, value: str, *, head_cut: bool, open_end: bool) -> str:
        if self.kept is None:
            return mask_secrets(value, head_cut=head_cut, open_end=open_end)
        return self.kept.masked(value, head_cut=head_cut, open_end=open_end)


def _at_bound(text: str, bound: int) -> bool:
    """Whether `text` holds `bound` UTF-8 bytes, less at most the 3 of a character that did
    not fit: a text cut there cannot be told from one that ended there."""
    least = bound - 3
    if len(text) * 4 < least:
        return False
    return len(text) >= least or len(text.encode("utf-8", "surrogatepass")) >= least


def _may_be_cut(text: str, output: ShellOutput) -> bool:
    """Whether `text`, one stream of `output`, may have lost its head: `truncated` says only
    that one of the two streams did, and a cut stream holds the bound's bytes, less at most
    the 3 of a character that did not fit. (A stream of exactly that many bytes that was
    never cut counts too: it cannot be told apart.)"""
    return output.truncated and _at_bound(text, MAX_OUTPUT_STREAM_BYTES)


NO_MASKING = Masking(enabled=False)
