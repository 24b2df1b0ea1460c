"""How deep a JSON value nests, measured without recursion, so that no nesting an agent sends
can exhaust the stack of the code that measures it."""

from __future__ import annotations

from collections.abc import Mapping


def nests_deeper_than(value: object, limit: int) -> bool:
    """Whether `value` holds an object or array deeper than `limit` (`value` is level 1),
    counted as the service counts."""
    stack: list[tuple[object, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, Mapping):
            children: list[object] = list(item.values())
        elif isinstance(item, list | tuple):
            children = list(item)
        else:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children)
    return False
