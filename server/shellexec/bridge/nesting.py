"""How deep a JSON value nests, and how many values and objects it holds, measured without
recursion, so that no nesting an agent sends can exhaust the stack of the code that measures
it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple


def nests_deeper_than(value: object, limit: int) -> bool:
    """Whether `value` holds an object or array deeper than `limit` (`value` is level 1),
    counted as the service counts."""
    return counted_within(value, limit) is None


class Counted(NamedTuple):
    """How many values a JSON value holds, itself included, and how many of them are
    objects."""

    values: int
    objects: int


def counted_within(value: object, limit: int) -> Counted | None:
    """What `value` holds (`Counted`); None when it holds an object or array deeper than
    `limit`."""
    # Level by level: one list per level rather than a (child, depth) pair per value.
    level: list[object] = [value]
    depth = 1
    values = objects = 0
    while level:
        values += len(level)
        children: list[object] = []
        for item in level:
            if isinstance(item, Mapping):
                objects += 1
                children.extend(item.values())
            elif isinstance(item, list | tuple):
                children.extend(item)
            else:
                continue
            if depth > limit:
                return None
        level = children
        depth += 1
    return Counted(values, objects)
