"""Auggie's XML-like tool text: `<return-code>`, `<output>` and `<stderr>` sections.

Auggie (`launch-process`, `read-process`) reports a finished command as

    Here are the results from executing the command.
    <return-code>
    0
    </return-code>
    <output>
    total 8
    ...

    </output>

and a command still running at its timeout as `Command may still be running. ... Output so
far:` followed by an `<output>` section and no `<return-code>`. A text is read as markup when
a section tag stands on a line of its own, or a line starts with a whole return code written
inline (`<return-code>0</return-code>`, as the specification writes it). Parsing rules:

- a section runs from the first `<tag>` to the last `</tag>` after it; one line break after
  the opening tag and one before the closing tag belong to the markup;
- the `<output>` section is the command's own text, which may print anything, tags included:
  `<stderr>` and `<return-code>` are read only outside it (`launch-process` writes the return
  code before the output, `read-process` after it);
- an unclosed `<output>` or `<stderr>` keeps everything after its opening tag (malformed
  markup loses no text);
- with neither an `<output>` nor a `<stderr>` section the whole text is the combined output,
  markup included, so nothing is lost (with only `<stderr>`, no stdout is stated);
- the prose around the sections (`Here are the results...`) is Auggie's, not the command's,
  and is dropped;
- `<return-code>` is an exit code only when its content is a valid one (`exit_codes`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from shellexec.normalize.exit_codes import parse_exit_code

_SECTION_LINE = re.compile(r"^<(?:output|stderr|return-code)>[ \t]*\r?$", re.MULTILINE)
# A return code on one line: the tag Auggie alone writes, around a number.
_INLINE_RETURN_CODE = re.compile(r"^<return-code>[ \t]*[+-]?[0-9]+[ \t]*</return-code>",
                                 re.MULTILINE)
_RETURN_CODE = re.compile(r"<return-code>([^<]*)</return-code>")


@dataclass(frozen=True, slots=True)
class Markup:
    """What an Auggie tool text says: its output, its stderr section and its return code."""

    stdout: str | None
    stderr: str | None
    exit_code: int | None


def has_markup(text: str) -> bool:
    """Whether `text` has an Auggie section tag on a line of its own, or a line that starts
    with a return code written inline."""
    return (_SECTION_LINE.search(text) is not None
            or _INLINE_RETURN_CODE.search(text) is not None)


def parse_markup(text: str) -> Markup:
    """The sections of an Auggie tool text (see the module rules)."""
    output, outside = _section(text, "output")
    stderr, _ = _section(outside, "stderr")
    if output is None and stderr is None:
        output = text
    code = _RETURN_CODE.search(outside)
    exit_code = parse_exit_code(code.group(1)) if code else None
    return Markup(stdout=output, stderr=stderr, exit_code=exit_code)


def _section(text: str, tag: str) -> tuple[str | None, str]:
    """The body of `text`'s `tag` section (None without one), and the text around it, the
    section replaced by a line break."""
    opening = text.find(f"<{tag}>")
    if opening < 0:
        return None, text
    start = opening + len(tag) + 2
    end = text.rfind(f"</{tag}>", start)
    if end < 0:
        return _drop_leading_break(text[start:]), text[:opening]
    body = _drop_trailing_break(_drop_leading_break(text[start:end]))
    return body, text[:opening] + "\n" + text[end + len(tag) + 3:]


def _drop_leading_break(body: str) -> str:
    return body[2:] if body.startswith("\r\n") else body.removeprefix("\n")


def _drop_trailing_break(body: str) -> str:
    return body[:-2] if body.endswith("\r\n") else body.removesuffix("\n")
