"""The `$ <command>` presentation line some agents put in front of the output.

OMP shows every command as a `$ <command>` content block before the output (and any agent
may echo the same way). The command already has its own row, so the line is removed from the
body, exactly once per text the agent sends:

- only at the very beginning of the text, and only the full line `$ ` + the command (leading
  and trailing whitespace of the command ignored);
- followed by one line break (`\\n` or `\\r\\n`) which goes with it, or by nothing at all
  when real output is glued to it without a separator;
- a line break inside a multi-line command matches `\\n` or `\\r\\n` in the text.

Output that merely starts with the command text (without `$ `) is real output and is kept,
and a second `$ <command>` after the first is kept too.
"""

from __future__ import annotations

from shellexec.normalize.commands import command_of

# The longest `$ ` title looked at as a wrapper's echo. OMP cuts its titles at 4,000
# characters; unwrapping costs time in proportion to the title, and this runs for each update
# of the call, so a title of megabytes would cost that much per update.
MAX_WRAPPER_TITLE_CHARS = 8192


def presentation_line(command: str | None, title: str | None) -> str | None:
    """The echo to look for: `$ ` + the command, else a title that is already `$ ...`.

    The command shown is a wrapper's script (`cd src && ls` for `bash -c 'cd src && ls'`),
    while OMP echoes the command as the agent sent it, which is also its title: a `$ ` title
    (of at most MAX_WRAPPER_TITLE_CHARS) that holds the command shown and unwraps to it is
    that echo."""
    if command is None or not command.strip():
        return _dollar_title(title)
    line = "$ " + command.strip().replace("\r\n", "\n")
    if title is None or len(title) > MAX_WRAPPER_TITLE_CHARS:
        return line
    titled = _dollar_title(title)
    if (titled is not None and titled != line and command.strip() in titled
            and command_of({"command": titled[2:]}) == command):
        return titled
    return line


def _dollar_title(title: str | None) -> str | None:
    if title is None or not title.startswith("$ ") or not title[2:].strip():
        return None
    return title.rstrip().replace("\r\n", "\n")


def strip_presentation(text: str, line: str | None) -> tuple[str, bool]:
    """`text` without a leading presentation `line`, and whether it was there."""
    if line is None:
        return text, False
    end = _match_head(text, line)
    if end is None:
        return text, False
    return text[end + _separator_length(text, end) :], True


def _match_head(text: str, line: str) -> int | None:
    """Where `line` ends if `text` starts with it (a `\\n` in it may be `\\r\\n` in text)."""
    position = 0
    parts = line.split("\n")
    for index, part in enumerate(parts):
        if not text.startswith(part, position):
            return None
        position += len(part)
        if index < len(parts) - 1:
            step = _separator_length(text, position)
            if step == 0:
                return None
            position += step
    return position


def _separator_length(text: str, position: int) -> int:
    if text.startswith("\r\n", position):
        return 2
    return 1 if text.startswith("\n", position) else 0


def drop_separator(text: str) -> str:
    """`text` without one leading line break (the end of an echo sent in an earlier chunk)."""
    return text[_separator_length(text, 0) :]
