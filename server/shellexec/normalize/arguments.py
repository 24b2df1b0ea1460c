"""A call's arguments where an agent puts them somewhere other than a `rawInput` object.

`commands.command_of` reads `rawInput.command`. Three agents put the command elsewhere; each is
turned into the `rawInput` object the rule reads (an update's own `rawInput` object wins):

- Mistral Vibe (any agent): `rawInput` is a JSON **string** (`"{\\"command\\":\\"ls\\"}"`):
  read as the object it holds;
- Kimi CLI: the `content` text is the argument JSON (`{"command": "ls -la"}`), sent again
  while the model streams it: read as that object once it parses, and never output;
- Gemini CLI: the title is the command and `content` says
  `[current working directory /repo] (List files)`: `command` is the title, with `cwd` and
  `description` from that text, which is never output.

Older Gemini releases put all of it in the title: `ls [current working directory /repo] (List
files)`; the command is then the part before the bracket. Kimi's argument text while it streams
is partial JSON: it names no command, and is still not output (Kimi sends no live output).
"""

from __future__ import annotations

import json
import re
from typing import Final

from shellexec.normalize.access import JsonObject, block_texts, nonblank_at, obj
from shellexec.normalize.text import valid_text

_GEMINI_PLACE: Final = re.compile(
    r"\[current working directory (?P<cwd>[^\]\n]+)\](?: \((?P<description>[^\n]*)\))?")
_GEMINI_TITLE_MARK: Final = " [current working directory "


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
    """Whether a content text is Gemini's `[current working directory ...] (...)` line."""
    return _GEMINI_PLACE.fullmatch(text.strip()) is not None


def is_gemini_title(title: str | None) -> bool:
    """Whether a title is an older Gemini's `command [current working directory ...] (...)`."""
    return _legacy_title(title) is not None


def _legacy_title(title: str | None) -> tuple[str, re.Match[str]] | None:
    """The command and the place of an older Gemini title (split at its last place mark)."""
    if title is None:
        return None
    text = title.strip()
    at = text.rfind(_GEMINI_TITLE_MARK)
    place = _GEMINI_PLACE.fullmatch(text, at + 1) if at > 0 else None
    return None if place is None else (text[:at], place)


def gemini_arguments(title: str | None, content: object) -> JsonObject | None:
    """`{command, cwd?, description?}` from Gemini's title and its working-directory text."""
    fields: dict[str, str] = {}
    place = next((m for m in map(_gemini_place, block_texts(content)) if m is not None), None)
    if place is not None:
        fields.update(place)
    legacy = _legacy_title(title)
    if legacy is not None:  # before v0.42 the title holds all three
        command, place_of_title = legacy
        fields = {**_place_fields(place_of_title), **fields, "command": command}
    elif title is not None and title.strip():
        fields["command"] = valid_text(title.strip())
    return fields if "command" in fields else None


def _gemini_place(text: str) -> dict[str, str] | None:
    found = _GEMINI_PLACE.fullmatch(text.strip())
    return None if found is None else _place_fields(found)


def _place_fields(found: re.Match[str]) -> dict[str, str]:
    fields = {"cwd": found.group("cwd").strip()}
    description = found.group("description")
    if description is not None and description.strip():
        fields["description"] = description.strip()
    return {key: valid_text(value) for key, value in fields.items()}


def named_command(arguments: JsonObject) -> bool:
    """Whether these arguments name a command (a non-blank string)."""
    return nonblank_at(obj(arguments), "command") is not None
