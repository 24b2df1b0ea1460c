"""Exit codes an agent writes only in text: each agent's exact form, and nowhere else.

Command output can hold any words, so a text is never searched for an exit code. Each agent
below is known to write its code in one fixed place of a text it composes itself; the pattern
is anchored to that place (the whole text, its last line, or its second line), and applies only
to a call recognised as that agent's (by hint or shape, see `dialects`). The code found ranks
below every structured field (`exit_codes.ExitRank.MARKUP`), and the words are removed from the
text where they are the agent's own bookkeeping rather than output.

- Qwen Code: its model text `Command: ...\\nDirectory: ...\\nOutput: ...\\nError: ...\\n
  Exit Code: N`, followed only by `Signal:`, `Background PIDs:` and `Process Group PGID:`
  lines; none of it is output (the output is `rawOutput`);
- Goose: the last paragraph of its text, `\\n\\nCommand exited with code N`; the text
  before it stays;
- Mistral Vibe: the second line of `Command failed: '...'\\nReturn code: N` (after an
  optional `bash failed: `); its `Stderr:` and `Stdout:` parts are the output;
- Copilot CLI (second-hand): a closing `<exited with exit code N>`; the text before it stays;
- Gemini CLI: the whole text `Command exited with code: N` (sent only without output);
- Kimi CLI: the whole text `Command failed with exit code: N.` (sent only without output).

`Exit Code: (none)` (Qwen, a signal) and any other value are unknown, never 0; a Qwen command
whose `Signal:` line names a signal failed (`qwen_signal`), as Gemini's `Command terminated by
signal` and an ACP v2 terminal's signal do.

Gemini CLI says how a command without output ended in other whole texts too, which state no
exit code (`gemini_ending`): `Command terminated by signal: S` and `Command failed: <error>`
(it failed), `Command moved to background (PID: N). Output hidden. Press Ctrl+B to view.` and
`Background process started with PID N.` (it left the foreground: no result). None of them is
output; the error's words are Gemini's, like Qwen's `Error:` line, so they are not stderr.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final, Literal

from shellexec.normalize.exit_codes import parse_exit_code

GeminiEnding = Literal["signal", "error", "background"]
"""How a Gemini command without output ended, when its text says so without an exit code."""

_CODE: Final = r"(?P<code>[+-]?[0-9]{1,10})"
_GOOSE: Final = re.compile(r"(?:\A|\n\n)Command exited with code " + _CODE + r"\s*\Z")
_VIBE: Final = re.compile(
    r"\A(?:bash failed: )?Command failed: [^\n]*\nReturn code: " + _CODE + r"(?P<rest>\n.*)?\Z",
    re.DOTALL)
_VIBE_STDOUT: Final = "\nStdout: "
_VIBE_STDERR: Final = "\nStderr: "
_COPILOT: Final = re.compile(r"\n?<exited with exit code " + _CODE + r">\s*\Z")
_GEMINI: Final = re.compile(r"\ACommand exited with code: " + _CODE + r"\s*\Z")
_KIMI: Final = re.compile(r"\ACommand failed with exit code: " + _CODE + r"\.\s*\Z")
_PID: Final = r"[0-9]{1,10}"
_GEMINI_ENDING_HEADS: Final = ("Command ", "Background ")
_GEMINI_ENDINGS: Final[tuple[tuple[re.Pattern[str], GeminiEnding], ...]] = (
    (re.compile(r"Command terminated by signal: [A-Za-z0-9_+-]{1,32}"), "signal"),
    (re.compile(r"Command failed: [^\n]*"), "error"),
    (re.compile(r"Command moved to background \(PID: " + _PID
                + r"\)\. Output hidden\. Press Ctrl\+B to view\."), "background"),
    (re.compile(r"Background process started with PID " + _PID + r"\."), "background"),
)

_QWEN_HEAD: Final = "Command: "
_QWEN_EXIT: Final = "Exit Code: "
_QWEN_SIGNAL: Final = "Signal: "
_QWEN_NONE: Final = "(none)"
_QWEN_TRAILERS: Final = (_QWEN_SIGNAL, "Background PIDs: ", "Process Group PGID: ")
_QWEN_SECTIONS: Final = ("\nDirectory: ", "\nOutput: ", "\nError: ")


@dataclass(frozen=True, slots=True)
class TextExit:
    """What an agent's text says: the exit code (None: unknown) and the text left as output."""

    exit_code: int | None
    rest: str


def is_qwen_model_text(text: str) -> bool:
    """Whether a text is Qwen's model text (`Command: ...` through `Exit Code: ...`)."""
    return _qwen_exit_line(text) is not None


def qwen_exit(text: str) -> int | None:
    """The code on the `Exit Code:` line of Qwen's model text, else None."""
    line = _qwen_exit_line(text)
    return None if line is None else parse_exit_code(line.removeprefix(_QWEN_EXIT))


def qwen_signal(text: str) -> bool:
    """Whether Qwen's model text names the signal that ended the command (its `Signal:` line
    holds another value than `(none)`): then it failed, as a signal fails an ACP v2 terminal's
    command, though Qwen reports the call `completed` with `Exit Code: (none)`."""
    if _qwen_exit_line(text) is None:
        return False
    for line in reversed(text.rstrip().split("\n")):
        if not line.startswith(_QWEN_TRAILERS):
            return False
        if line.startswith(_QWEN_SIGNAL):
            return line.removeprefix(_QWEN_SIGNAL).strip() not in ("", _QWEN_NONE)
    return False


def _qwen_exit_line(text: str) -> str | None:
    """The `Exit Code: ...` line that ends Qwen's model text (before its trailer lines)."""
    if not text.startswith(_QWEN_HEAD) or not all(s in text for s in _QWEN_SECTIONS):
        return None
    lines = text.rstrip().split("\n")
    while lines and lines[-1].startswith(_QWEN_TRAILERS):
        lines.pop()
    return lines[-1] if len(lines) > 1 and lines[-1].startswith(_QWEN_EXIT) else None


def goose_exit(text: str) -> TextExit | None:
    """Goose's closing `Command exited with code N` paragraph, and the text before it."""
    return _trailer(_GOOSE, text)


def copilot_exit(text: str) -> TextExit | None:
    """Copilot's closing `<exited with exit code N>`, and the text before it."""
    return _trailer(_COPILOT, text)


def gemini_exit(text: str) -> TextExit | None:
    """Gemini's whole-text `Command exited with code: N` (no output)."""
    return _trailer(_GEMINI, text)


def gemini_ending(text: str) -> GeminiEnding | None:
    """How Gemini's whole text says the command ended without an exit code (see the module):
    `signal`, `error` (both failed it) or `background`; None for any other text."""
    if not text.startswith(_GEMINI_ENDING_HEADS):
        return None
    whole = text.rstrip()
    return next((ending for pattern, ending in _GEMINI_ENDINGS if pattern.fullmatch(whole)),
                None)


def kimi_exit(text: str) -> TextExit | None:
    """Kimi's whole-text `Command failed with exit code: N.` (no output)."""
    return _trailer(_KIMI, text)


def _trailer(pattern: re.Pattern[str], text: str) -> TextExit | None:
    found = pattern.search(text)
    if found is None:
        return None
    return TextExit(parse_exit_code(found.group("code")), text[: found.start()])


@dataclass(frozen=True, slots=True)
class VibeFailure:
    """Vibe's failure text: the return code and the streams it quotes (`""` when it quotes none)."""

    exit_code: int | None
    stdout: str
    stderr: str


def vibe_failure(text: str) -> VibeFailure | None:
    """Vibe's `Command failed: '...'\\nReturn code: N[\\nStderr: ...][\\nStdout: ...]`, else None.

    Vibe quotes stderr first, then stdout, each only when non-empty; a stderr that itself holds
    `\\nStdout: ` cannot be told apart, so the first such line starts stdout.
    """
    found = _VIBE.match(text)
    if found is None:
        return None
    rest = found.group("rest") or ""
    stderr = ""
    if rest.startswith(_VIBE_STDERR):
        body = rest[len(_VIBE_STDERR) :]
        cut = body.find(_VIBE_STDOUT)
        stderr, rest = (body, "") if cut < 0 else (body[:cut], body[cut:])
    stdout = rest[len(_VIBE_STDOUT) :] if rest.startswith(_VIBE_STDOUT) else ""
    return VibeFailure(parse_exit_code(found.group("code")), stdout, stderr)
