"""The result an agent reports in `rawOutput`: authoritative text, stderr and exit code.

`rawOutput` is the tool's own result object, so it is trusted over everything streamed live.
Which field holds the output depends on the agent; the first row that matches wins:

| `rawOutput` | stdout | agent |
| --- | --- | --- |
| a string | the string | Claude (plain mode), any |
| a list of text blocks | their text, joined | Claude (plain mode) |
| `{formatted_output}`, else `{aggregated_output}` | that combined text | Codex |
| `{output, metadata}` | `output`; `(no output)` is empty | OpenCode |
| `{output}` with section tags | the `<output>` section | Auggie (`markup`) |
| `{output}` | `output` | any |
| `{stdout}` | `stdout` | any |
| `{metadata: {output}}` | `metadata.output` | OpenCode |
| `{content: [text blocks]}` | their text without OMP's trailer | OMP |

stderr is the object's `stderr` field, else Auggie's `<stderr>` section; nothing else. Beside
Codex's combined text (`formatted_output`, `aggregated_output`) it is stated empty: that text
already holds stderr, interleaved, and keeping it apart too would show it twice (ADR 0130).

OpenCode's `...output truncated...` prefix and `<shell_metadata>` notes are kept: they tell
where the full output went and why the command stopped. OMP appends `\\n\\nWall time: X
seconds` and, on failure, `\\n\\nCommand exited with code N` to the text it shows the model;
both are its own bookkeeping (the exit code is in `details.exitCode`), so they are removed.
A field not listed for a shape is *omitted*: it leaves the accumulated value alone.

The first two rows are *plain* results: bare text with no provider fields. `_meta` terminal
output outranks them (see `streams`); every structured result keeps its meaning. Codex's
combined text on a finished Codex call outranks even the agent's own ACP terminal, never one
a client hosts (`streams`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from shellexec.normalize.access import JsonObject, block_texts, first_text, is_obj, obj, text_at
from shellexec.normalize.content import join_blocks
from shellexec.normalize.exit_codes import ExitRank, native_exit
from shellexec.normalize.markup import has_markup, parse_markup
from shellexec.normalize.text import valid_text

_OPENCODE_EMPTY = "(no output)"
_OMP_EXIT_TRAILER = re.compile(r"(?:\A|\n\n)Command exited with code -?[0-9]+\Z")
_OMP_TIME_TRAILER = re.compile(r"(?:\A|\n\n)Wall time: [0-9.]+ seconds?\Z")


@dataclass(frozen=True, slots=True)
class FinalOutput:
    """What one `rawOutput` states; None means the field is not stated."""

    stdout: str | None = None
    stderr: str | None = None
    exit_code: int | None = None
    exit_rank: ExitRank = ExitRank.NONE
    plain: bool = False
    """A bare string or text-block list: the fallback for agents without terminal `_meta`."""
    combined: bool = False
    """Codex's combined end text (`formatted_output`, `aggregated_output`): the command's
    whole output by the agent's own account, above its live stream (see `streams`)."""


def read_raw_output(raw: object) -> FinalOutput:
    """What a `rawOutput` value states (see the module table)."""
    if isinstance(raw, str):
        return FinalOutput(stdout=valid_text(raw), plain=True)
    if isinstance(raw, list):
        texts = block_texts(raw)
        return FinalOutput(stdout=join_blocks(texts), plain=True) if texts else FinalOutput()
    return _from_object(obj(raw))


def _from_object(raw: JsonObject) -> FinalOutput:
    native = native_exit(raw)
    rank = ExitRank.NATIVE if native is not None else ExitRank.NONE
    stderr = text_at(raw, "stderr")
    combined = first_text(text_at(raw, "formatted_output"), text_at(raw, "aggregated_output"))
    if combined is not None:
        return FinalOutput(combined, None if stderr is None else "", native, rank,
                           combined=True)
    output = text_at(raw, "output")
    if output is not None and "metadata" not in raw and has_markup(output):
        return _from_markup(output, stderr, native)
    return FinalOutput(_stdout_of(raw, output), stderr, native, rank)


def _stdout_of(raw: JsonObject, output: str | None) -> str | None:
    if output is not None and "metadata" in raw:
        output = _opencode_text(raw, output)
    return first_text(
        output,
        text_at(raw, "stdout"),
        text_at(obj(raw.get("metadata")), "output"),
        _omp_text(raw),
    )


def _opencode_text(raw: JsonObject, output: str) -> str:
    # OpenCode writes "(no output)" for an empty run; metadata.output tells it apart from a
    # command that really printed those words.
    if output == _OPENCODE_EMPTY and text_at(raw.get("metadata"), "output") != _OPENCODE_EMPTY:
        return ""
    return output


def _omp_text(raw: JsonObject) -> str | None:
    texts = block_texts(raw.get("content"))
    if not texts:
        return None
    text = join_blocks(texts)
    if is_obj(raw.get("details")):
        text = _OMP_TIME_TRAILER.sub("", _OMP_EXIT_TRAILER.sub("", text))
    return text


def _from_markup(output: str, stderr: str | None, native: int | None) -> FinalOutput:
    markup = parse_markup(output)
    stderr = first_text(stderr, markup.stderr)
    if native is not None:
        return FinalOutput(markup.stdout, stderr, native, ExitRank.NATIVE)
    rank = ExitRank.MARKUP if markup.exit_code is not None else ExitRank.NONE
    return FinalOutput(markup.stdout, stderr, markup.exit_code, rank)
