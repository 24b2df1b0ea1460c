"""How deep a JSON value nests, measured without recursion, so that no nesting an agent sends
can exhaust the stack of the code that measures it."""

from __future__ import annotations

from collections.abc import Mapping


def nests_deeper_than(value: object, limit: int) -> bool:
    """Whether `value` holds an object or array deeper than `limit` (`value` is level 1),
    counted as the service counts."""
    # Level by level: one list per level rather than a (child, depth) pair per value.
    level: list[object] = [value]
    depth = 1
    while level:
        children: list[object] = []
        for item in level:
            if isinstance(item, Mapping):
                children.extend(item.values())
            elif isinstance(item, list | tuple):
                children.extend(item)
            else:
                continue
            if depth > limit:
                return True
        level = children
        depth += 1
    return False
