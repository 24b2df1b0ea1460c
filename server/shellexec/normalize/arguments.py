"""A call's arguments where an agent puts them somewhere other than a `rawInput` object.

`commands.command_of` reads `rawInput.command`. Three agents put the command elsewhere; each is
turned into the `rawInput` object the rule reads (an update's own `rawInput` object wins):

- Mistral Vibe (any agent): `rawInput` is a JSON **string** (`"{\\"command\\":\\"ls\\"}"`):
  read as the object it holds;
- Kimi CLI: the `content` text is the argument JSON (`{"command": "ls -la"}`), sent again
  while the model streams it: read as that object once it parses, and never output;
- Gemini CLI: the title is the command and `content` says where it runs and why:
  `[current working directory /repo] (List files)`, or `[in src] (List files)` when the model
  named a directory (relative to the workspace), either followed by ` [background]` for a
  command the model sent to the background: `command` is the title, with `cwd` (the
  directory) and `description` from that text, which is never output.

Older Gemini releases put all of it in the title: `ls [in src] (List files)`; the command is
then the part before the last place mark (` [current working directory ` or ` [in `) after
which the rest is a whole place text. Kimi's argument text while it streams is partial JSON:
it names no command, and is still not output (Kimi sends no live output).

A place text is read by hand, not by a regular expression: trying each mark of a title
against the rest would cost the square of a hostile title's length; reading it from its
brackets costs its length once.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Final

from shellexec.normalize.access import JsonObject, block_texts, nonblank_at, obj
from shellexec.normalize.text import valid_text

_GEMINI_OPENERS: Final = ("[current working directory ", "[in ")
_GEMINI_MARK: Final = " ["
_GEMINI_BACKGROUND: Final = " [background]"
_GEMINI_DESCRIPTION: Final = " ("


@dataclass(frozen=True, slots=True)
class GeminiPlace:
    """What Gemini's place text says: the directory (as Gemini wrote it) and the description."""

    cwd: str
    description: str | None


def json_object_text(value: object) -> JsonObject | None:
    """The JSON object a string holds (an object's text only), else None."""
    if not isinstance(value, str) or not value.lstrip().startswith("{"):
        return None
    try:
        parsed = json.loads(value)
    except (ValueError, RecursionError):  # partial, malformed or absurdly nested: says nothing
        return None
    return parsed if isinstance(parsed, dict) else None


def raw_input_object(raw_input: object) -> JsonObject | None:
    """`rawInput` as an object: itself, or the object a JSON string holds (Vibe)."""
    if isinstance(raw_input, dict):
        return raw_input
    return json_object_text(raw_input)


def kimi_arguments(content: object) -> JsonObject | None:
    """The arguments Kimi's `content` text holds, once the streamed JSON is complete."""
    texts = block_texts(content)
    return json_object_text(texts[0]) if len(texts) == 1 else None


def is_gemini_place(text: str) -> bool:
    """Whether a content text is Gemini's place text (`[in src] (List files)`...)."""
    return gemini_place(text) is not None


def is_gemini_title(title: str | None) -> bool:
    """Whether a title is an older Gemini's `command [in ...] (...)` (or
    `[current working directory ...]`)."""
    return _legacy_title(title) is not None


def gemini_place(text: str) -> GeminiPlace | None:
    """The place a whole content text states (see the module), else None."""
    line = text.strip()
    opener = _opener_at(line, 0)
    if opener is None or "\n" in line:
        return None
    return _place(line, len(opener), line.find("]", len(opener)))


def _opener_at(text: str, at: int) -> str | None:
    return next((opener for opener in _GEMINI_OPENERS if text.startswith(opener, at)), None)


def _place(line: str, begin: int, close: int) -> GeminiPlace | None:
    """The place of `line` whose directory runs from `begin` to its first `]` at `close`
    (-1: none), when all that follows is `[ (description)][ [background]]`; `line` holds no
    line break."""
    if close <= begin:
        return None
    end = len(line)
    if line.endswith(_GEMINI_BACKGROUND) and end - len(_GEMINI_BACKGROUND) > close:
        end -= len(_GEMINI_BACKGROUND)
    description = None
    if end > close + 1:  # ` (description)` must fill the rest
        if not (line.startswith(_GEMINI_DESCRIPTION, close + 1) and end - close > 3
                and line[end - 1] == ")"):
            return None
        description = line[close + 1 + len(_GEMINI_DESCRIPTION) : end - 1].strip() or None
    cwd = line[begin:close].strip()
    return GeminiPlace(valid_text(cwd), None if description is None else valid_text(description))


def _legacy_title(title: str | None) -> tuple[str, GeminiPlace] | None:
    """The command and the place of an older Gemini title: split at its last place mark after
    which the rest is a whole place text (the command may itself hold a mark)."""
    if title is None:
        return None
    text = title.strip()
    line_start = text.rfind("\n") + 1  # a place holds no line break: it is on the last line
    close, searched = -1, len(text)
    at = text.rfind(_GEMINI_MARK, line_start)
    while at > 0:
        opener = _opener_at(text, at + 1)
        if opener is not None:
            begin = at + 1 + len(opener)
            # The first `]` after `begin`: in what lies before the last mark's `begin`, else
            # the one found for that mark; so the title is searched once in all.
            found = text.find("]", begin, max(begin, searched))
            close, searched = (found if found >= 0 else close), begin
            place = _place(text, begin, close)
            if place is not None:
                return text[:at], place
        at = text.rfind(_GEMINI_MARK, line_start, at + 1)
    return None


def gemini_arguments(title: str | None, content: object) -> JsonObject | None:
    """`{command, cwd?, description?}` from Gemini's title and its place text."""
    fields: dict[str, str] = {}
    place = next((p for p in map(gemini_place, block_texts(content)) if p is not None), None)
    if place is not None:
        fields.update(_place_fields(place))
    # Before v0.42 the title held all three, and `content` no place: a title read so when the
    # place is in `content` would cut a command that itself ends in ` [in x]`.
    legacy = _legacy_title(title) if place is None else None
    if legacy is not None:
        command, place_of_title = legacy
        fields = {**_place_fields(place_of_title), **fields, "command": command}
    elif title is not None and title.strip():
        fields["command"] = valid_text(title.strip())
    return fields if "command" in fields else None


def _place_fields(place: GeminiPlace) -> dict[str, str]:
    fields = {"cwd": place.cwd}
    if place.description is not None:
        fields["description"] = place.description
    return fields


def named_command(arguments: JsonObject) -> bool:
    """Whether these arguments name a command (a non-blank string)."""
    return nonblank_at(obj(arguments), "command") is not None
