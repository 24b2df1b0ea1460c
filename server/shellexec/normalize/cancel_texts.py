"""Cancels that an agent reports as `completed` or `failed`, told by the agent's own text.

ACP v1 has no `cancelled` tool status, so agents say it in words. Where the words are the
agent's fixed text, the call is read as `cancelled` (ACP v2's word) instead, and the text keeps
only the output it carries:

- Gemini CLI, `completed`, the whole text `Command cancelled by user.`, or
  `Command was automatically cancelled because it exceeded the timeout of X minutes without
  output.` (its inactivity timeout), each alone or followed by a blank line,
  `Output before cancellation:` and a line break: the output kept is what follows that line;
- Qwen Code, `completed`, a model text starting `Command was cancelled by user before it
  could `: the output kept is the `rawOutput` display text, unless it is only
  `Command cancelled by user.`;
- Mistral Vibe, `failed`, `rawOutput` `Tool execution interrupted by user.`: no output.

A call the agent never finishes (Kimi sends no final update on cancel) is cancelled by the
end of the prompt instead (`fold.cancel`), its transcript kept.
"""

from __future__ import annotations

import re
from typing import Final

_GEMINI_CANCEL: Final = re.compile(
    r"\A(?:Command cancelled by user\.|Command was automatically cancelled because it exceeded"
    r" the timeout of [0-9]{1,9}(?:\.[0-9]{1,9})? minutes without output\.)"
    r"(?:\n\nOutput before cancellation:\n(?P<output>.*)|\s*)\Z", re.DOTALL)
_QWEN_CANCEL: Final = "Command was cancelled by user before it could "
_QWEN_PLACEHOLDER: Final = "Command cancelled by user."
_VIBE_INTERRUPT: Final = "Tool execution interrupted by user."


def gemini_cancel_output(text: str) -> str | None:
    """The output a whole Gemini cancel text carries (`""` if none), or None if it is no
    cancel (a command that printed the words among other output)."""
    found = _GEMINI_CANCEL.match(text)
    return None if found is None else found.group("output") or ""


def is_qwen_cancel(model_text: str) -> bool:
    """Whether Qwen's model text says the user cancelled the command."""
    return model_text.startswith(_QWEN_CANCEL)


def is_qwen_placeholder(display: str) -> bool:
    """Whether Qwen's display text is only its cancel placeholder, not output."""
    return display.strip() == _QWEN_PLACEHOLDER


def is_vibe_interrupt(raw_output: object) -> bool:
    """Whether Vibe's `rawOutput` is its user-interrupt text."""
    return isinstance(raw_output, str) and raw_output.strip() == _VIBE_INTERRUPT
