"""Reading fields out of arbitrary JSON without trusting its shape.

An update is whatever `json.loads` produced. These helpers answer "the object at this key, if
it is an object" and "the text at this key, if it is text", so that every caller treats a
missing key, `null` and a value of the wrong type alike: as no information.
"""

from __future__ import annotations

from collections.abc import Mapping

from shellexec.normalize.text import valid_text

JsonObject = Mapping[str, object]

_EMPTY: JsonObject = {}


def is_obj(value: object) -> bool:
    """Whether `value` is a JSON object."""
    return isinstance(value, Mapping)


def obj(value: object) -> JsonObject:
    """`value` when it is a JSON object, else an empty one."""
    return value if isinstance(value, Mapping) else _EMPTY


def obj_at(value: object, *path: str) -> JsonObject:
    """The JSON object found by following `path` from `value`, else an empty one."""
    for key in path:
        value = obj(value).get(key)
    return obj(value)


def text_at(value: object, key: str) -> str | None:
    """The string at `key` of `value` (made valid UTF-8), or None when it is not a string."""
    found = obj(value).get(key)
    return valid_text(found) if isinstance(found, str) else None


def nonblank_at(value: object, key: str) -> str | None:
    """Like `text_at`, but an empty or whitespace-only string counts as absent too."""
    found = text_at(value, key)
    return found if found is not None and found.strip() else None


def first_text(*texts: str | None) -> str | None:
    """The first of `texts` that is stated; an empty string is stated (and wins)."""
    return next((text for text in texts if text is not None), None)


def payload_text(value: object) -> str | None:
    """Text carried either as a bare string or as `{"data": "..."}` (the terminal `_meta` keys)."""
    if isinstance(value, str):
        return valid_text(value)
    return text_at(value, "data")


def block_text(block: object) -> str | None:
    """The text of one content item: an ACP `{"type": "content", "content": {text block}}`
    wrapper or a bare `{"type": "text", "text": ...}` block; None for anything else."""
    item = obj(block)
    if item.get("type") == "content":
        item = obj(item.get("content"))
    if item.get("type") != "text":
        return None
    return text_at(item, "text")


def block_texts(blocks: object) -> list[str]:
    """The texts of the text blocks in a content list, in order; other items are skipped."""
    if not isinstance(blocks, list):
        return []
    return [text for text in map(block_text, blocks) if text is not None]
